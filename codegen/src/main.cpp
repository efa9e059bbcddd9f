// cubind-codegen: generate | check | dump-ir | coverage
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "codegen/annotations.hpp"
#include "codegen/emit_python.hpp"
#include "codegen/emitters.hpp"
#include "codegen/frontend.hpp"
#include "codegen/ir_json.hpp"
#include "codegen/output.hpp"

namespace fs = std::filesystem;

namespace {

struct Inputs {
  std::string cuda_include;
  std::string extras_include;
  std::string annotations_dir = "codegen/annotations";
  std::string resource_dir = CUBIND_CLANG_RESOURCE_DIR;
  std::vector<std::string> libraries;
};

std::string default_cuda_include() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return std::string(v) + "/include";
  }
  return "/usr/local/cuda/include";
}

// Headers of NVIDIA wheels that a toolkit may lack (nvFatbin.h, cufile.h, cudla.h),
// unpacked by scripts/fetch_cuda_extras.sh: searched before the toolkit's, so that
// the bindings come from the pinned versions wherever the toolkit has its own copy.
std::string default_extras_include() {
  if (const char* v = std::getenv("CUBIND_CUDA_EXTRAS"); v != nullptr && *v != '\0') return std::string(v) + "/include";
  return ".cuda-extras/include";
}

void add_input_options(CLI::App* cmd, Inputs& in) {
  cmd->add_option("--cuda-include", in.cuda_include, "directory holding cuda.h (default: $CUDA_HOME/include)");
  cmd->add_option("--extras-include", in.extras_include,
                  "directory holding the headers of scripts/cuda-extras.lock (default: $CUBIND_CUDA_EXTRAS/include, "
                  "else .cuda-extras/include; skipped when absent)");
  cmd->add_option("--annotations", in.annotations_dir, "directory of <library>.yaml annotation files")
      ->capture_default_str();
  cmd->add_option("--resource-dir", in.resource_dir, "clang's resource directory")->capture_default_str();
  cmd->add_option("--library", in.libraries, "only these libraries (the stems of the annotation files)");
}

// The annotation files to read: <dir>/<name>.yaml for each --library, else
// every .yaml file in the directory, by name. Each one is a library.
std::vector<fs::path> annotation_files(const Inputs& in) {
  const fs::path dir(in.annotations_dir);
  if (!fs::is_directory(dir)) throw std::runtime_error("annotation directory " + dir.string() + " does not exist");
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  if (in.libraries.empty()) {
    if (found.empty()) throw std::runtime_error("no <library>.yaml file in " + dir.string());
    return found;
  }
  std::vector<fs::path> selected;
  for (const auto& name : in.libraries) {
    const auto it = std::find_if(found.begin(), found.end(), [&](const fs::path& p) { return p.stem() == name; });
    if (it == found.end()) {
      std::string known;
      for (const auto& p : found) known += (known.empty() ? "" : ", ") + p.stem().string();
      throw std::runtime_error("unknown library '" + name + "': no " + (dir / (name + ".yaml")).string() +
                               " (libraries: " + known + ")");
    }
    selected.push_back(*it);
  }
  return selected;
}

// Parses and classifies the selected libraries. Problems are collected, not
// thrown, so `check` can list them all.
std::vector<codegen::Library> load(const Inputs& in, std::vector<std::string>& problems) {
  codegen::FrontendOptions options;
  options.include_dirs = {in.cuda_include.empty() ? default_cuda_include() : in.cuda_include};
  const std::string extras = in.extras_include.empty() ? default_extras_include() : in.extras_include;
  if (!in.extras_include.empty() || fs::is_directory(extras)) {
    options.include_dirs.insert(options.include_dirs.begin(), extras);
  }
  options.resource_dir = in.resource_dir;
  std::vector<codegen::Library> out;
  for (const fs::path& file : annotation_files(in)) {
    const codegen::Annotations annotations = codegen::load_annotations(file.string());
    // The stem is how --library finds a library, and the emitted files are named after it.
    if (annotations.library.name != file.stem().string()) {
      throw codegen::AnnotationError(file.string() + ": library.name is '" + annotations.library.name +
                                     "'; a library's file is <name>.yaml, so expected '" + file.stem().string() + "'");
    }
    codegen::Library lib = codegen::parse_library(annotations.library, options);
    for (auto& p : codegen::classify(lib, annotations)) problems.push_back(std::move(p));
    out.push_back(std::move(lib));
  }
  // Every library shares the toolkit's version; the driver's header states it.
  int version = 0;
  for (const auto& lib : out) version = std::max(version, lib.cuda_version);
  for (auto& lib : out) lib.cuda_version = version;
  return out;
}

int run_generate(const Inputs& in, const std::string& output_dir) {
  std::vector<std::string> problems;
  auto libraries = load(in, problems);
  if (!problems.empty()) {
    for (const auto& p : problems) std::cerr << "error: " << p << "\n";
    std::cerr << "cubind-codegen: " << problems.size() << " problem(s); nothing was written\n";
    return 1;
  }
  codegen::EmitOptions options;
  options.generator_version = CUBIND_CODEGEN_VERSION;
  std::vector<codegen::GeneratedFile> files;
  for (const auto& lib : libraries) {
    files.push_back(codegen::emit_pxd(lib, options));
    files.push_back(codegen::emit_loader_header(lib, options));
    files.push_back(codegen::emit_loader_source(lib, options));
    for (auto& f : codegen::emit_python_module(lib, options)) files.push_back(std::move(f));
  }
  files.push_back(codegen::emit_python_version(libraries, options));
  files.push_back(codegen::emit_python_libraries(libraries, options));
  // The generator owns these folders of the output root and nothing else:
  // loader/ and CMakeLists.txt there are hand-written.
  static const char* const kGeneratedFolders[] = {"include/cubind/raw/", "src/", "python/"};
  for (const auto& f : files) {
    if (std::none_of(std::begin(kGeneratedFolders), std::end(kGeneratedFolders),
                     [&](const char* folder) { return f.path.rfind(folder, 0) == 0; })) {
      throw std::logic_error("generated file " + f.path + " lies outside the generated folders");
    }
  }
  const auto written = codegen::write_files(output_dir, files);
  std::cout << "cubind-codegen: " << files.size() << " files in " << output_dir << " (" << written
            << " changed)\n";
  return 0;
}

int run_check(const Inputs& in) {
  std::vector<std::string> problems;
  auto libraries = load(in, problems);
  for (const auto& lib : libraries) {
    for (const auto& note : lib.notes) std::cout << "note: " << lib.name << ": " << note << "\n";
  }
  for (const auto& p : problems) std::cerr << "error: " << p << "\n";
  if (!problems.empty()) {
    std::cerr << "cubind-codegen check: " << problems.size() << " problem(s)\n";
    return 1;
  }
  std::cout << "cubind-codegen check: ok\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cubind-codegen: bindings for the CUDA headers"};
  app.require_subcommand(1);
  Inputs in;
  std::string output_dir = "bindings";
  std::string ir_output;

  auto* generate = app.add_subcommand("generate", "parse, classify and write bindings/");
  add_input_options(generate, in);
  generate->add_option("-o,--output", output_dir, "output root")->capture_default_str();

  auto* check = app.add_subcommand("check", "fail on unclassified pointer parameters and stale annotations");
  add_input_options(check, in);

  auto* dump = app.add_subcommand("dump-ir", "write the IR as JSON");
  add_input_options(dump, in);
  dump->add_option("-o,--output", ir_output, "file to write (default: standard output)");

  auto* coverage = app.add_subcommand("coverage", "functions declared, bound and skipped, per library");
  add_input_options(coverage, in);

  CLI11_PARSE(app, argc, argv);

  try {
    if (generate->parsed()) return run_generate(in, output_dir);
    if (check->parsed()) return run_check(in);
    std::vector<std::string> problems;
    auto libraries = load(in, problems);
    if (dump->parsed()) {
      nlohmann::ordered_json j = nlohmann::ordered_json::array();
      for (const auto& lib : libraries) j.push_back(codegen::to_json(lib));
      const std::string text = j.dump(1) + "\n";
      if (ir_output.empty()) {
        std::cout << text;
      } else {
        codegen::write_files(fs::path(ir_output).parent_path().string(),
                             {{fs::path(ir_output).filename().string(), text}});
      }
      return 0;
    }
    if (coverage->parsed()) {
      std::cout << codegen::coverage_table(libraries);
      for (const auto& p : problems) std::cerr << "error: " << p << "\n";
      return problems.empty() ? 0 : 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "cubind-codegen: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
