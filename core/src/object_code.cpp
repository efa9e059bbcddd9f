#include "cubind/object_code.hpp"

#include <cerrno>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "driver_init.hpp"
#include "null_owner.hpp"

namespace cubind {

namespace {

struct KindExtension {
  CodeKind kind;
  const char* extension;
};
constexpr KindExtension kExtensions[] = {
    {CodeKind::cubin, ".cubin"},   {CodeKind::ptx, ".ptx"},  {CodeKind::ltoir, ".ltoir"},
    {CodeKind::fatbin, ".fatbin"}, {CodeKind::object, ".o"}, {CodeKind::library, ".a"},
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

namespace detail {

// Owns one CUlibrary; shared by the ObjectCode and every Kernel taken from it.
struct LibraryOwner {
  CUlibrary handle = nullptr;

  explicit LibraryOwner(CUlibrary library) noexcept : handle(library) {}
  LibraryOwner(const LibraryOwner&) = delete;
  LibraryOwner& operator=(const LibraryOwner&) = delete;
  ~LibraryOwner() {
    // At process exit the driver may already be shut down (CUDA_ERROR_DEINITIALIZED):
    // the library is gone with it, so the status is not worth reporting.
    release_quietly([this] { return raw::cuLibraryUnload(handle); });
  }
};

}  // namespace detail

const char* code_kind_name(CodeKind kind) noexcept {
  switch (kind) {
    case CodeKind::cubin: return "cubin";
    case CodeKind::ptx: return "ptx";
    case CodeKind::ltoir: return "ltoir";
    case CodeKind::fatbin: return "fatbin";
    case CodeKind::object: return "object";
    case CodeKind::library: return "library";
  }
  return "unknown";
}

CodeKind code_kind_from_path(const std::string& path) {
  for (const KindExtension& entry : kExtensions) {
    if (ends_with(path, entry.extension)) return entry.kind;
  }
  std::string known;
  for (const KindExtension& entry : kExtensions) {
    known += known.empty() ? "" : ", ";
    known += entry.extension;
  }
  throw std::invalid_argument("cannot tell the kind of code in '" + path + "' from its extension (known: " + known +
                              "); give the CodeKind explicitly");
}

struct ObjectCode::State {
  CodeKind kind;
  std::string name;
  std::vector<char> bytes;
  std::mutex load_mutex;
  std::shared_ptr<const detail::LibraryOwner> library;  // null until first needed
};

ObjectCode::ObjectCode() noexcept = default;
ObjectCode::~ObjectCode() = default;
ObjectCode::ObjectCode(ObjectCode&& other) noexcept = default;
ObjectCode& ObjectCode::operator=(ObjectCode&& other) noexcept = default;
ObjectCode::ObjectCode(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}

ObjectCode ObjectCode::from_bytes(CodeKind kind, std::vector<char> bytes, std::string name) {
  auto state = std::make_unique<State>();
  state->kind = kind;
  state->name = name.empty() ? std::string("<") + code_kind_name(kind) + " bytes>" : std::move(name);
  state->bytes = std::move(bytes);
  return ObjectCode(std::move(state));
}

ObjectCode ObjectCode::from_file(const std::string& path, std::optional<CodeKind> kind) {
  const CodeKind resolved = kind ? *kind : code_kind_from_path(path);
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw std::system_error(errno, std::generic_category(),
                            "cubind::ObjectCode::from_file: cannot open '" + path + "'");
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) {
    throw std::system_error(errno, std::generic_category(),
                            "cubind::ObjectCode::from_file: cannot read '" + path + "'");
  }
  return from_bytes(resolved, std::move(bytes), path);
}

ObjectCode::State& ObjectCode::state(const char* method) const {
  if (!state_) detail::throw_null_owner("ObjectCode", method, "moved from, or default-constructed");
  return *state_;
}

CodeKind ObjectCode::kind() const { return state("kind").kind; }
const std::string& ObjectCode::name() const { return state("name").name; }
const std::vector<char>& ObjectCode::bytes() const { return state("bytes").bytes; }

namespace {

std::shared_ptr<const detail::LibraryOwner> load(const char* method, const std::string& name, CodeKind kind,
                                                 const std::vector<char>& bytes) {
  if (kind != CodeKind::cubin && kind != CodeKind::ptx && kind != CodeKind::fatbin) {
    throw std::logic_error(std::string("cubind::ObjectCode::") + method + ": " + name + " is " + code_kind_name(kind) +
                           ", which the driver cannot load; link it to a cubin first (cubind::Linker)");
  }
  // The driver takes the image without its size; an empty one has nothing to read.
  if (bytes.empty() || (kind == CodeKind::ptx && bytes.front() == '\0')) {
    throw std::invalid_argument(std::string("cubind::ObjectCode::") + method + ": " + name + " is empty: it holds no " +
                                code_kind_name(kind));
  }
  const void* image = bytes.data();
  // The driver reads PTX as a C string.
  std::vector<char> terminated;
  if (kind == CodeKind::ptx && (bytes.empty() || bytes.back() != '\0')) {
    terminated.reserve(bytes.size() + 1);
    terminated.assign(bytes.begin(), bytes.end());
    terminated.push_back('\0');
    image = terminated.data();
  }
  // Loading needs an initialised driver but no context.
  detail::init_driver();
  CUlibrary library = nullptr;
  detail::check(raw::cuLibraryLoadData(&library, image, nullptr, nullptr, 0, nullptr, nullptr, 0), "cuLibraryLoadData");
  return std::make_shared<const detail::LibraryOwner>(library);
}

std::vector<std::string> names_of_kernels(CUlibrary library) {
  unsigned int count = 0;
  detail::check(raw::cuLibraryGetKernelCount(&count, library), "cuLibraryGetKernelCount");
  std::vector<CUkernel> kernels(count);
  if (count > 0) {
    detail::check(raw::cuLibraryEnumerateKernels(kernels.data(), count, library), "cuLibraryEnumerateKernels");
  }
  std::vector<std::string> names;
  names.reserve(count);
  for (CUkernel kernel : kernels) {
    const char* name = nullptr;
    detail::check(raw::cuKernelGetName(&name, kernel), "cuKernelGetName");
    names.emplace_back(name != nullptr ? name : "");
  }
  return names;
}

}  // namespace

std::shared_ptr<const detail::LibraryOwner> ObjectCode::library(const char* method) const {
  State& s = state(method);
  std::lock_guard<std::mutex> lock(s.load_mutex);
  if (!s.library) s.library = load(method, s.name, s.kind, s.bytes);
  return s.library;
}

CUlibrary ObjectCode::handle() const { return library("handle")->handle; }

std::vector<std::string> ObjectCode::kernel_names() const { return names_of_kernels(library("kernel_names")->handle); }

Kernel ObjectCode::get_kernel(const std::string& kernel_name) const {
  std::shared_ptr<const detail::LibraryOwner> owner = library("get_kernel");
  const CUlibrary library = owner->handle;
  const State& s = *state_;
  CUkernel kernel = nullptr;
  const CUresult status = raw::cuLibraryGetKernel(&kernel, library, kernel_name.c_str());
  if (status == CUDA_ERROR_NOT_FOUND) {
    const std::vector<std::string> present = names_of_kernels(library);
    std::string listing;
    for (const std::string& name : present) {
      listing += listing.empty() ? "" : ", ";
      listing += name;
    }
    throw std::invalid_argument(
        "cubind::ObjectCode::get_kernel: no kernel named '" + kernel_name + "' in " + s.name + "; it has " +
        std::to_string(present.size()) + (present.size() == 1 ? " kernel: " : " kernels: ") +
        (listing.empty() ? "none" : listing) + " (a C++ kernel needs its mangled name, or extern \"C\")");
  }
  detail::check(status, "cuLibraryGetKernel");
  return Kernel(kernel, kernel_name, std::move(owner));
}

}  // namespace cubind
