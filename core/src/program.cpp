#include "cubind/program.hpp"

#include <cctype>
#include <stdexcept>
#include <utility>

#include "cubind/error.hpp"
#include "cubind/raw/nvrtc.hpp"
#include "compile_log.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// sm_90, sm_90a, compute_100f: a prefix, digits, then any suffix letters for the compiler to judge.
bool is_arch(const std::string& arch, const char* prefix) {
  if (!starts_with(arch, prefix)) return false;
  const std::size_t digits = std::char_traits<char>::length(prefix);
  return arch.size() > digits && std::isdigit(static_cast<unsigned char>(arch[digits]));
}

void destroy(nvrtcProgram& handle) noexcept {
  if (handle == nullptr) return;
  // NVRTC is a plain library with no shutdown of its own; a failure here
  // leaves nothing to clean up, and destructors must not throw.
  try {
    raw::nvrtcDestroyProgram(&handle);
  } catch (...) {
  }
  handle = nullptr;
}

nvrtcProgram create(const std::string& text, const std::string& name, const std::vector<ProgramHeader>& headers) {
  std::vector<const char*> sources;
  std::vector<const char*> names;
  sources.reserve(headers.size());
  names.reserve(headers.size());
  for (const ProgramHeader& header : headers) {
    sources.push_back(header.source.c_str());
    names.push_back(header.name.c_str());
  }
  nvrtcProgram handle = nullptr;
  detail::check(raw::nvrtcCreateProgram(&handle, text.c_str(), name.c_str(), static_cast<int>(headers.size()),
                                        sources.data(), names.data()),
                "nvrtcCreateProgram");
  return handle;
}

std::string program_log(nvrtcProgram handle) {
  std::size_t size = 0;
  detail::check(raw::nvrtcGetProgramLogSize(handle, &size), "nvrtcGetProgramLogSize");
  std::string log(size, '\0');
  if (size > 0) detail::check(raw::nvrtcGetProgramLog(handle, log.data()), "nvrtcGetProgramLog");
  return detail::log_text(std::move(log));
}

std::vector<char> compiled_code(nvrtcProgram handle, CodeKind target) {
  std::size_t size = 0;
  std::vector<char> code;
  switch (target) {
    case CodeKind::ptx:
      detail::check(raw::nvrtcGetPTXSize(handle, &size), "nvrtcGetPTXSize");
      code.resize(size);
      detail::check(raw::nvrtcGetPTX(handle, code.data()), "nvrtcGetPTX");
      break;
    case CodeKind::cubin:
      detail::check(raw::nvrtcGetCUBINSize(handle, &size), "nvrtcGetCUBINSize");
      code.resize(size);
      detail::check(raw::nvrtcGetCUBIN(handle, code.data()), "nvrtcGetCUBIN");
      break;
    default:
      detail::check(raw::nvrtcGetLTOIRSize(handle, &size), "nvrtcGetLTOIRSize");
      code.resize(size);
      detail::check(raw::nvrtcGetLTOIR(handle, code.data()), "nvrtcGetLTOIR");
      break;
  }
  return code;
}

}  // namespace

std::vector<std::string> ProgramOptions::render() const {
  std::vector<std::string> options;
  if (!arch.empty()) {
    if (!is_arch(arch, "sm_") && !is_arch(arch, "compute_")) {
      throw std::invalid_argument(
          "ProgramOptions::arch is '" + arch +
          "': expected sm_N (a real GPU, for example sm_90) or compute_N (virtual, for example compute_90)");
    }
    options.push_back("--gpu-architecture=" + arch);
  }
  if (!cpp_standard.empty()) options.push_back("--std=" + cpp_standard);
  for (const Define& define : defines) {
    if (define.name.empty() || define.name.find('=') != std::string::npos) {
      throw std::invalid_argument(
          "ProgramOptions::defines holds the name '" + define.name +
          "': a macro name must be non-empty and hold no '=' (the value goes in Define::value)");
    }
    options.push_back("--define-macro=" + define.name + (define.value ? "=" + *define.value : std::string()));
  }
  for (const std::string& path : include_paths) {
    if (path.empty()) throw std::invalid_argument("ProgramOptions::include_paths holds an empty path");
    options.push_back("--include-path=" + path);
  }
  if (debug) options.emplace_back("--device-debug");
  if (line_info) options.emplace_back("--generate-line-info");
  if (relocatable_device_code) options.emplace_back("--relocatable-device-code=true");
  if (lto) options.emplace_back("--dlink-time-opt");
  if (fast_math) options.emplace_back("--use_fast_math");
  if (max_register_count) {
    if (*max_register_count < 1) {
      throw std::invalid_argument("ProgramOptions::max_register_count is " + std::to_string(*max_register_count) +
                                  ": it must be at least 1");
    }
    options.push_back("--maxrregcount=" + std::to_string(*max_register_count));
  }
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

Program::Program(std::string source, std::string name, std::vector<ProgramHeader> headers)
    : source_{std::move(source), std::move(name), std::move(headers)} {
  handle_ = create(source_.text, source_.name, source_.headers);
}

Program::~Program() { destroy(handle_); }

Program::Program(Program&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      source_(std::move(other.source_)),
      compiled_(std::exchange(other.compiled_, false)) {}

Program& Program::operator=(Program&& other) noexcept {
  if (this != &other) {
    destroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    source_ = std::move(other.source_);
    compiled_ = std::exchange(other.compiled_, false);
  }
  return *this;
}

void Program::check_not_null(const char* method) const {
  if (handle_ == nullptr) detail::throw_null_owner("Program", method, "moved from");
}

const std::string& Program::name() const {
  check_not_null("name");
  return source_.name;
}

nvrtcProgram Program::handle() const {
  check_not_null("handle");
  return handle_;
}

CompileResult Program::compile(CodeKind target, const ProgramOptions& options,
                               const std::vector<std::string>& name_expressions) {
  check_not_null("compile");
  if (target != CodeKind::ptx && target != CodeKind::cubin && target != CodeKind::ltoir) {
    throw std::invalid_argument(std::string("cubind::Program::compile: NVRTC produces ptx, cubin or ltoir, not ") +
                                code_kind_name(target));
  }
  if (target == CodeKind::cubin && !is_arch(options.arch, "sm_")) {
    throw std::invalid_argument(
        "cubind::Program::compile: a cubin needs a real architecture in ProgramOptions::arch (for example sm_90), not '" +
        options.arch + "'");
  }
  if (options.lto && target != CodeKind::ltoir) {
    throw std::invalid_argument(
        std::string("cubind::Program::compile: ProgramOptions::lto produces LTO-IR; compile to CodeKind::ltoir, not ") +
        code_kind_name(target));
  }
  std::vector<std::string> rendered;
  if (target == CodeKind::ltoir && !options.lto) {
    ProgramOptions with_lto = options;
    with_lto.lto = true;
    rendered = with_lto.render();
  } else {
    rendered = options.render();
  }
  std::vector<const char*> argv;
  argv.reserve(rendered.size());
  for (const std::string& option : rendered) argv.push_back(option.c_str());

  // NVRTC keeps the outputs of an earlier compile, and takes name expressions
  // only before the first: every compile after the first starts from a fresh
  // program, as does one after a rejected name expression.
  if (compiled_) {
    nvrtcProgram fresh = create(source_.text, source_.name, source_.headers);
    destroy(handle_);
    handle_ = fresh;
  }
  compiled_ = true;
  for (const std::string& expression : name_expressions) {
    detail::check(raw::nvrtcAddNameExpression(handle_, expression.c_str()), "nvrtcAddNameExpression");
  }
  const nvrtcResult status = raw::nvrtcCompileProgram(handle_, static_cast<int>(argv.size()), argv.data());

  CompileResult result;
  result.log = program_log(handle_);
  if (status == NVRTC_ERROR_COMPILATION) return result;
  if (status != NVRTC_SUCCESS) {
    // An option NVRTC rejects is explained only in the log.
    const std::string name = detail::nvrtc_result_name(status);
    std::string log = result.log;
    while (!log.empty() && std::isspace(static_cast<unsigned char>(log.back()))) log.pop_back();
    throw NvrtcError(status, "nvrtcCompileProgram", name, log.empty() ? name : name + ": " + log);
  }
  result.ok = true;
  result.code = ObjectCode::from_bytes(target, compiled_code(handle_, target), source_.name);
  for (const std::string& expression : name_expressions) result.lowered_names[expression] = lowered_name(expression);
  return result;
}

std::string Program::lowered_name(const std::string& name_expression) const {
  check_not_null("lowered_name");
  const char* lowered = nullptr;
  detail::check(raw::nvrtcGetLoweredName(handle_, name_expression.c_str(), &lowered), "nvrtcGetLoweredName");
  return lowered != nullptr ? lowered : "";
}

}  // namespace cubind
