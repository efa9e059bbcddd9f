#include "codegen/output.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace codegen {

namespace fs = std::filesystem;

namespace {
bool same_content(const fs::path& path, const std::string& content) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str() == content;
}
}  // namespace

std::size_t write_files(const std::string& root, const std::vector<GeneratedFile>& files) {
  const fs::path base = root.empty() ? fs::path(".") : fs::path(root);
  std::vector<std::pair<fs::path, fs::path>> staged;  // temporary -> final
  const auto discard = [&staged] {
    for (const auto& [tmp, target] : staged) {
      std::error_code ec;
      fs::remove(tmp, ec);
    }
  };
  // A target that cannot take a file is found before anything is written.
  for (const auto& f : files) {
    const fs::path target = base / f.path;
    std::error_code ec;
    if (fs::is_directory(target, ec)) throw std::runtime_error("cannot write " + target.string() + ": it is a directory");
  }
  try {
    for (const auto& f : files) {
      const fs::path target = base / f.path;
      if (same_content(target, f.content)) continue;
      fs::create_directories(target.parent_path());
      const fs::path tmp = target.string() + ".cubind-tmp";
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << f.content;
      out.close();
      if (!out) throw std::runtime_error("cannot write " + tmp.string());
      staged.emplace_back(tmp, target);
    }
  } catch (...) {
    discard();
    throw;
  }
  for (std::size_t i = 0; i < staged.size(); ++i) {
    std::error_code ec;
    fs::rename(staged[i].first, staged[i].second, ec);
    if (ec) {
      // Renames are what can still fail (a target that became a directory):
      // the remaining temporaries go, and the error names the file.
      const std::string target = staged[i].second.string();
      staged.erase(staged.begin(), staged.begin() + static_cast<std::ptrdiff_t>(i));
      discard();
      throw std::runtime_error("cannot replace " + target + ": " + ec.message());
    }
  }
  return staged.size();
}

}  // namespace codegen
