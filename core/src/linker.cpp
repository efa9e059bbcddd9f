#include "cubind/linker.hpp"

#include <cctype>
#include <stdexcept>
#include <utility>

#include "cubind/error.hpp"
#include "cubind/raw/nvjitlink.hpp"
#include "compile_log.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

nvJitLinkInputType input_type(CodeKind kind) {
  switch (kind) {
    case CodeKind::cubin: return NVJITLINK_INPUT_CUBIN;
    case CodeKind::ptx: return NVJITLINK_INPUT_PTX;
    case CodeKind::ltoir: return NVJITLINK_INPUT_LTOIR;
    case CodeKind::fatbin: return NVJITLINK_INPUT_FATBIN;
    case CodeKind::object: return NVJITLINK_INPUT_OBJECT;
    case CodeKind::library: return NVJITLINK_INPUT_LIBRARY;
  }
  throw std::invalid_argument("cubind::Linker: unknown CodeKind " + std::to_string(static_cast<int>(kind)));
}

void destroy(nvJitLinkHandle& handle) noexcept {
  if (handle == nullptr) return;
  try {
    raw::nvJitLinkDestroy(&handle);
  } catch (...) {
  }
  handle = nullptr;
}

using LogSize = nvJitLinkResult (*)(nvJitLinkHandle, std::size_t*);
using LogRead = nvJitLinkResult (*)(nvJitLinkHandle, char*);

std::string read_log(nvJitLinkHandle handle, LogSize size_of, const char* size_name, LogRead read,
                     const char* read_name) {
  std::size_t size = 0;
  detail::check(size_of(handle, &size), size_name);
  std::string log(size, '\0');
  if (size > 0) detail::check(read(handle, log.data()), read_name);
  return detail::log_text(std::move(log));
}

std::string error_log_of(nvJitLinkHandle handle) {
  return read_log(handle, raw::nvJitLinkGetErrorLogSize, "nvJitLinkGetErrorLogSize", raw::nvJitLinkGetErrorLog,
                  "nvJitLinkGetErrorLog");
}

std::string info_log_of(nvJitLinkHandle handle) {
  return read_log(handle, raw::nvJitLinkGetInfoLogSize, "nvJitLinkGetInfoLogSize", raw::nvJitLinkGetInfoLog,
                  "nvJitLinkGetInfoLog");
}

}  // namespace

std::vector<std::string> LinkerOptions::render() const {
  std::vector<std::string> options;
  const bool real_arch =
      arch.rfind("sm_", 0) == 0 && arch.size() > 3 && std::isdigit(static_cast<unsigned char>(arch[3]));
  if (!real_arch) {
    throw std::invalid_argument("LinkerOptions::arch is '" + arch +
                                "': nvJitLink needs a real architecture such as sm_90");
  }
  options.push_back("-arch=" + arch);
  if (lto) options.emplace_back("-lto");
  if (ptx) options.emplace_back("-ptx");
  if (optimization_level) {
    if (*optimization_level < 0 || *optimization_level > 3) {
      throw std::invalid_argument("LinkerOptions::optimization_level is " + std::to_string(*optimization_level) +
                                  ": it must be 0, 1, 2 or 3");
    }
    options.push_back("-O" + std::to_string(*optimization_level));
  }
  if (debug) options.emplace_back("-g");
  if (line_info) options.emplace_back("-lineinfo");
  if (max_register_count) {
    if (*max_register_count < 1) {
      throw std::invalid_argument("LinkerOptions::max_register_count is " + std::to_string(*max_register_count) +
                                  ": it must be at least 1");
    }
    options.push_back("-maxrregcount=" + std::to_string(*max_register_count));
  }
  for (const std::string& option : ptxas_options) options.push_back("-Xptxas=" + option);
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

Linker::Linker(const LinkerOptions& options) : ptx_(options.ptx) {
  const std::vector<std::string> rendered = options.render();
  std::vector<const char*> argv;
  argv.reserve(rendered.size());
  for (const std::string& option : rendered) argv.push_back(option.c_str());
  const nvJitLinkResult status = raw::nvJitLinkCreate(&handle_, static_cast<uint32_t>(argv.size()), argv.data());
  if (status == NVJITLINK_SUCCESS) return;
  if (handle_ == nullptr) detail::check(status, "nvJitLinkCreate");
  // nvJitLink makes a handle even for options it rejects, holding the log that says why: put
  // the log in the error, then free the handle, since no destructor runs after a constructor throws.
  try {
    throw_with_log(status, "nvJitLinkCreate");
  } catch (...) {
    destroy(handle_);
    throw;
  }
}

Linker::~Linker() { destroy(handle_); }

Linker::Linker(Linker&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      ptx_(std::exchange(other.ptx_, false)),
      linked_(std::exchange(other.linked_, false)) {}

Linker& Linker::operator=(Linker&& other) noexcept {
  if (this != &other) {
    destroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    ptx_ = std::exchange(other.ptx_, false);
    linked_ = std::exchange(other.linked_, false);
  }
  return *this;
}

void Linker::check_not_null(const char* method) const {
  if (handle_ == nullptr) detail::throw_null_owner("Linker", method, "moved from");
}

void Linker::check_not_linked(const char* method) const {
  check_not_null(method);
  if (linked_) {
    throw std::logic_error(std::string("cubind::Linker::") + method +
                           ": this Linker has linked already; a Linker links once, so make a new one");
  }
}

nvJitLinkHandle Linker::handle() const {
  check_not_null("handle");
  return handle_;
}

void Linker::throw_with_log(nvJitLinkResult status, const char* api_function) const {
  std::string log;
  try {
    log = error_log_of(handle_);
  } catch (const CudaError&) {
    // The status alone still says what failed.
  }
  while (!log.empty() && std::isspace(static_cast<unsigned char>(log.back()))) log.pop_back();
  const std::string name = detail::nvjitlink_result_name(status);
  throw NvJitLinkError(status, api_function, name, log.empty() ? "nvJitLink returned " + name : log);
}

void Linker::add(const ObjectCode& code) {
  check_not_linked("add");
  add_bytes(code.kind(), code.bytes().data(), code.bytes().size(), code.name());
}

void Linker::add_bytes(CodeKind kind, const void* data, std::size_t size, const std::string& name) {
  check_not_linked("add_bytes");
  if (data == nullptr && size > 0) {
    throw std::invalid_argument("cubind::Linker::add_bytes: data is null, with size " + std::to_string(size));
  }
  const nvJitLinkResult status = raw::nvJitLinkAddData(handle_, input_type(kind), data, size, name.c_str());
  if (status != NVJITLINK_SUCCESS) throw_with_log(status, "nvJitLinkAddData");
}

void Linker::add_file(const std::string& path, std::optional<CodeKind> kind) {
  check_not_linked("add_file");
  const CodeKind resolved = kind ? *kind : code_kind_from_path(path);
  const nvJitLinkResult status = raw::nvJitLinkAddFile(handle_, input_type(resolved), path.c_str());
  if (status != NVJITLINK_SUCCESS) throw_with_log(status, "nvJitLinkAddFile");
}

LinkResult Linker::link() {
  check_not_linked("link");
  linked_ = true;
  const nvJitLinkResult status = raw::nvJitLinkComplete(handle_);
  LinkResult result;
  result.error_log = error_log_of(handle_);
  result.info_log = info_log_of(handle_);
  if (status != NVJITLINK_SUCCESS) {
    if (result.error_log.empty())
      result.error_log = "nvJitLinkComplete returned " + detail::nvjitlink_result_name(status);
    return result;
  }
  std::vector<char> code;
  std::size_t size = 0;
  if (ptx_) {
    detail::check(raw::nvJitLinkGetLinkedPtxSize(handle_, &size), "nvJitLinkGetLinkedPtxSize");
    code.resize(size);
    detail::check(raw::nvJitLinkGetLinkedPtx(handle_, code.data()), "nvJitLinkGetLinkedPtx");
  } else {
    detail::check(raw::nvJitLinkGetLinkedCubinSize(handle_, &size), "nvJitLinkGetLinkedCubinSize");
    code.resize(size);
    detail::check(raw::nvJitLinkGetLinkedCubin(handle_, code.data()), "nvJitLinkGetLinkedCubin");
  }
  result.ok = true;
  result.code = ObjectCode::from_bytes(ptx_ ? CodeKind::ptx : CodeKind::cubin, std::move(code),
                                       ptx_ ? "linked.ptx" : "linked.cubin");
  return result;
}

std::string Linker::error_log() const {
  check_not_null("error_log");
  return error_log_of(handle_);
}

std::string Linker::info_log() const {
  check_not_null("info_log");
  return info_log_of(handle_);
}

}  // namespace cubind
