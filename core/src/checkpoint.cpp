#include "cubind/checkpoint.hpp"

#include <cctype>
#include <stdexcept>
#include <string>

#include "cubind/error.hpp"
#include "cubind/raw/driver.hpp"
#include "driver_init.hpp"

namespace cubind::checkpoint {

namespace {

std::string subject(int pid, const char* operation) {
  return "Process(pid=" + std::to_string(pid) + ")." + operation;
}

// The checkpoint calls act on another process and need no context here; the
// driver may still want cuInit in this one first. It is called only when the
// driver says so (CUDA_ERROR_NOT_INITIALIZED), so that a process that only
// checkpoints others never initializes CUDA for itself.
template <typename Call>
void call(Call&& fn, int pid, const char* api_function, const char* operation) {
  CUresult status = fn();
  if (status == CUDA_ERROR_NOT_INITIALIZED) {
    detail::init_driver();
    status = fn();
  }
  if (status != CUDA_SUCCESS) detail::throw_driver_error(status, api_function, subject(pid, operation));
}

}  // namespace

const char* to_string(ProcessState state) noexcept {
  switch (state) {
    case ProcessState::running:
      return "running";
    case ProcessState::locked:
      return "locked";
    case ProcessState::checkpointed:
      return "checkpointed";
    case ProcessState::failed:
      return "failed";
  }
  return nullptr;
}

Process::Process(int pid) : pid_(pid) {
  if (pid <= 0) throw std::invalid_argument("Process: pid is " + std::to_string(pid) + "; it must be > 0");
}

ProcessState Process::state() const {
  CUprocessState state = CU_PROCESS_STATE_RUNNING;
  call([&] { return raw::cuCheckpointProcessGetState(pid_, &state); }, pid_, "cuCheckpointProcessGetState",
       "state");
  return static_cast<ProcessState>(state);
}

int Process::restore_thread_id() const {
  int tid = 0;
  call([&] { return raw::cuCheckpointProcessGetRestoreThreadId(pid_, &tid); }, pid_,
       "cuCheckpointProcessGetRestoreThreadId", "restore_thread_id");
  return tid;
}

void Process::lock(unsigned int timeout_ms) const {
  CUcheckpointLockArgs args{};
  args.timeoutMs = timeout_ms;
  call([&] { return raw::cuCheckpointProcessLock(pid_, &args); }, pid_, "cuCheckpointProcessLock", "lock");
}

void Process::checkpoint() const {
  call([&] { return raw::cuCheckpointProcessCheckpoint(pid_, nullptr); }, pid_, "cuCheckpointProcessCheckpoint",
       "checkpoint");
}

void Process::restore(const std::vector<GpuPair>& gpu_mapping) const {
  if (gpu_mapping.empty()) {
    call([&] { return raw::cuCheckpointProcessRestore(pid_, nullptr); }, pid_, "cuCheckpointProcessRestore",
         "restore");
    return;
  }
  std::vector<CUcheckpointGpuPair> pairs(gpu_mapping.size());
  for (std::size_t i = 0; i < gpu_mapping.size(); ++i) {
    pairs[i].oldUuid = gpu_mapping[i].checkpointed;
    pairs[i].newUuid = gpu_mapping[i].restore_onto;
  }
  CUcheckpointRestoreArgs args{};
  args.gpuPairs = pairs.data();
  args.gpuPairsCount = static_cast<unsigned int>(pairs.size());
  call([&] { return raw::cuCheckpointProcessRestore(pid_, &args); }, pid_, "cuCheckpointProcessRestore", "restore");
}

void Process::unlock() const {
  call([&] { return raw::cuCheckpointProcessUnlock(pid_, nullptr); }, pid_, "cuCheckpointProcessUnlock", "unlock");
}

bool driver_supports_checkpoint() {
  int version = 0;
  detail::check(raw::cuDriverGetVersion(&version), "cuDriverGetVersion");
  return version >= k_required_driver_version;
}

CUuuid parse_uuid(const std::string& text) {
  std::string digits;
  std::string body = text;
  if (body.size() > 4 && body.compare(0, 4, "GPU-") == 0) body = body.substr(4);
  for (char c : body) {
    if (c == '-') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) {
      digits.clear();
      break;
    }
    digits += c;
  }
  if (digits.size() != 32) {
    throw std::invalid_argument("GPU UUID string must be 32 hex characters (with optional hyphens), got '" + text +
                                "'");
  }
  CUuuid id{};
  for (int i = 0; i < 16; ++i) id.bytes[i] = static_cast<char>(std::stoi(digits.substr(2 * i, 2), nullptr, 16));
  return id;
}

}  // namespace cubind::checkpoint
