// Checkpointing another CUDA process (cuCheckpointProcess*): lock it so that
// its CUDA calls block, checkpoint its GPU memory to host memory (releasing
// the GPU), restore it (onto other GPUs if asked), and unlock it. Process is a
// value naming a process by pid; it owns nothing, so a checkpoint outlives it.
//
// The driver must be new enough (CUDA 12.8, r570) and the platform must permit
// it (Linux, a process this one may trace). A refusal throws CudaError whose
// message names the operation and the pid.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace cubind::checkpoint {

// CUprocessState, as the driver reports it.
enum class ProcessState : int {
  running = CU_PROCESS_STATE_RUNNING,            // CUDA calls run
  locked = CU_PROCESS_STATE_LOCKED,              // CUDA calls block
  checkpointed = CU_PROCESS_STATE_CHECKPOINTED,  // GPU memory saved, GPU released
  failed = CU_PROCESS_STATE_FAILED,              // a checkpoint or restore failed beyond repair
};

// "running", "locked", "checkpointed", "failed" (cuda.core's names); nullptr
// for a value the driver added after CUDA 13.0.
const char* to_string(ProcessState state) noexcept;

// One GPU of a restore's remapping: the checkpointed GPU and the GPU to
// restore its allocations onto.
struct GpuPair {
  CUuuid checkpointed;
  CUuuid restore_onto;
};

// The driver version the checkpoint API came in (CUDA 12.8).
inline constexpr int k_required_driver_version = 12080;

class Process {
 public:
  // @throws std::invalid_argument for a pid <= 0.
  explicit Process(int pid);

  int pid() const noexcept { return pid_; }

  // cuCheckpointProcessGetState.
  // @throws CudaError (e.g. CUDA_ERROR_INVALID_VALUE for a process that has no CUDA)
  ProcessState state() const;
  // The id of the thread that restores the process (cuCheckpointProcessGetRestoreThreadId).
  int restore_thread_id() const;

  // Blocks the process's further CUDA calls, waiting up to timeout_ms for
  // the work in flight (0: no limit) (cuCheckpointProcessLock).
  void lock(unsigned int timeout_ms = 0) const;
  // Saves the GPU memory of a locked process to host memory and releases its
  // GPUs (cuCheckpointProcessCheckpoint).
  void checkpoint() const;
  // Restores a checkpointed process onto the GPUs it ran on, or through
  // gpu_mapping onto others; the process is locked afterwards
  // (cuCheckpointProcessRestore). A remapping must name every GPU the
  // kernel-mode driver sees, whatever CUDA_VISIBLE_DEVICES says.
  void restore(const std::vector<GpuPair>& gpu_mapping = {}) const;
  // Lets a locked process run its CUDA calls again (cuCheckpointProcessUnlock).
  void unlock() const;

 private:
  int pid_;
};

// Whether the installed driver has the checkpoint API (cuDriverGetVersion
// >= 12.8); it says nothing of whether the platform permits it.
// @throws LoaderError without a driver.
bool driver_supports_checkpoint();

// A GPU UUID from its text form: 32 hexadecimal digits, hyphens anywhere
// ("GPU-" prefixed or not, as nvidia-smi and Device::uuid() write them).
// @throws std::invalid_argument naming the text.
CUuuid parse_uuid(const std::string& text);

}  // namespace cubind::checkpoint
