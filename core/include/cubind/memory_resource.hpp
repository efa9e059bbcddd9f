// Where Buffers get their memory. MemoryResource is the interface; cubind
// provides stream-ordered device and pinned host pools (MemoryPool), pinned
// host memory from cuMemHostAlloc, and managed memory.
// Resources are shared (std::shared_ptr) by the buffers they allocated, so a
// resource lives as long as its last buffer.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cubind/device.hpp"
#include "cubind/stream.hpp"

namespace cubind {

class MemoryResource {
 public:
  virtual ~MemoryResource() = default;

  // At least `bytes` bytes, usable in stream order on `stream`.
  virtual void* allocate(std::size_t bytes, StreamRef stream) = 0;
  // Returns memory from allocate(); work already queued on `stream` may still
  // use it.
  virtual void deallocate(void* ptr, std::size_t bytes, StreamRef stream) = 0;

  virtual bool is_device_accessible() const noexcept = 0;
  virtual bool is_host_accessible() const noexcept = 0;
  // The ordinal of the device the memory lives on, or -1 for host memory.
  virtual int device_id() const noexcept = 0;

 protected:
  MemoryResource() = default;
  MemoryResource(const MemoryResource&) = default;
  MemoryResource& operator=(const MemoryResource&) = default;
};

// A POSIX file descriptor naming a memory pool, to send to another process
// (over a Unix socket with SCM_RIGHTS). Owns the descriptor and closes it.
class IpcPoolHandle {
 public:
  // Takes ownership of `fd`. @throws std::invalid_argument for a negative fd.
  static IpcPoolHandle from_native_handle(int fd);

  IpcPoolHandle(IpcPoolHandle&& other) noexcept;
  IpcPoolHandle& operator=(IpcPoolHandle&& other) noexcept;
  IpcPoolHandle(const IpcPoolHandle&) = delete;
  IpcPoolHandle& operator=(const IpcPoolHandle&) = delete;
  ~IpcPoolHandle();

  // -1 once moved from or released.
  int fd() const noexcept { return fd_; }
  // @throws std::logic_error when already released.
  int release();

 private:
  explicit IpcPoolHandle(int fd) noexcept : fd_(fd) {}

  int fd_;
};

struct DeviceMemoryResourceOptions {
  // Bytes the pool keeps reserved across synchronizations instead of returning
  // them to the system (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD). Unset keeps the
  // driver's default, 0: everything is released at each synchronization.
  std::optional<std::uint64_t> release_threshold;
  // The most the pool may reserve; 0 is the driver's limit.
  std::size_t max_size = 0;
  // Exportable to other processes as a POSIX file descriptor.
  bool ipc_enabled = false;
};

// What the stream-ordered pools share (cuMemAllocFromPoolAsync, cuMemFreeAsync
// on a CUmemoryPool): a pool the resource owns (created or imported, destroyed
// with the resource once its outstanding allocations are freed) or one the
// driver keeps (a default or current pool). An imported pool only maps
// allocations another process exported; it cannot allocate.
class MemoryPool : public MemoryResource {
 public:
  ~MemoryPool() override;
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // The stream may belong to any context, of this device or another: CUDA
  // orders a pool's allocation on a stream of any device
  // (cuMemAllocFromPoolAsync), and its free likewise.
  // @throws std::out_of_range for 0 bytes; std::logic_error for an imported
  // pool; std::invalid_argument for a closed or moved-from stream.
  void* allocate(std::size_t bytes, StreamRef stream) override;
  void deallocate(void* ptr, std::size_t bytes, StreamRef stream) override;

  CUmemoryPool handle() const noexcept { return pool_; }
  bool owns_pool() const noexcept { return owns_pool_; }
  bool is_ipc_enabled() const noexcept { return ipc_enabled_; }
  // Imported from another process (from_ipc_handle).
  bool is_imported() const noexcept { return imported_; }
  // The device whose primary context makes the calls that need a context;
  // for a DeviceMemoryResource, where the memory lives.
  const Device& device() const noexcept { return device_; }

  std::uint64_t release_threshold() const;
  void set_release_threshold(std::uint64_t bytes);
  // Bytes handed out and not yet freed (CU_MEMPOOL_ATTR_USED_MEM_CURRENT).
  std::uint64_t used_memory() const;
  // Bytes the pool holds from the system (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT).
  std::uint64_t reserved_memory() const;
  // Returns reserved memory beyond `bytes_to_keep` to the system (cuMemPoolTrimTo).
  void trim_to(std::size_t bytes_to_keep);

  // The pool as a file descriptor for another process
  // (cuMemPoolExportToShareableHandle). Each call gives a new descriptor.
  // @throws std::logic_error unless created with ipc_enabled.
  IpcPoolHandle export_ipc_handle() const;

 protected:
  // `device`'s primary context makes the calls that need one. `name` is the
  // class errors name ("DeviceMemoryResource"), a string literal.
  MemoryPool(const char* name, const Device& device, CUmemoryPool pool, bool owns_pool, bool ipc_enabled,
             bool imported);
  // cuMemPoolCreate.
  static CUmemoryPool create(const CUmemPoolProps& props);
  // cuMemPoolImportFromShareableHandle in `device`'s primary context. The
  // descriptor is not consumed.
  static CUmemoryPool import(const Device& device, const IpcPoolHandle& handle, const char* where);

  const char* name_;
  // Built once: the hot paths name them only on failure.
  std::string allocate_where_;
  std::string deallocate_where_;
  Device device_;
  CUcontext context_;
  CUmemoryPool pool_ = nullptr;
  bool owns_pool_ = false;
  bool ipc_enabled_ = false;
  bool imported_ = false;
};

// Stream-ordered device memory from a memory pool. Either the device's default
// pool, which the device keeps, or a pool of its own, created or imported here.
class DeviceMemoryResource final : public MemoryPool {
 public:
  // The device's default pool (cuDeviceGetDefaultMemPool).
  explicit DeviceMemoryResource(const Device& device);
  // A new pool on the device (cuMemPoolCreate).
  DeviceMemoryResource(const Device& device, const DeviceMemoryResourceOptions& options);
  // A pool another process exported with export_ipc_handle()
  // (cuMemPoolImportFromShareableHandle). The descriptor is not consumed.
  static std::shared_ptr<DeviceMemoryResource> from_ipc_handle(const Device& device, const IpcPoolHandle& handle);

  bool is_device_accessible() const noexcept override { return true; }
  bool is_host_accessible() const noexcept override { return false; }
  int device_id() const noexcept override { return device_.ordinal(); }

  // Lets `peer` read and write this pool's allocations (cuMemPoolSetAccess).
  // @throws std::invalid_argument when peer is the pool's own device.
  void grant_peer_access(const Device& peer);
  void revoke_peer_access(const Device& peer);
  // cuMemPoolGetAccess: always true for the pool's own device.
  bool is_accessible_from(const Device& peer) const;

 private:
  DeviceMemoryResource(const Device& device, CUmemoryPool pool, bool owns_pool, bool ipc_enabled, bool imported)
      : MemoryPool("DeviceMemoryResource", device, pool, owns_pool, ipc_enabled, imported) {}
  void set_access(const Device& peer, CUmemAccess_flags flags, const char* where);
};

struct PinnedMemoryResourceOptions {
  // Exportable to other processes as a POSIX file descriptor. The driver
  // shares only pools placed on a NUMA node (CU_MEM_LOCATION_TYPE_HOST_NUMA).
  bool ipc_enabled = false;
  // The most the pool may reserve; 0 is the driver's limit.
  std::size_t max_size = 0;
  // The host NUMA node the memory is placed on. Unset: wherever the system
  // places it (CU_MEM_LOCATION_TYPE_HOST), or, with ipc_enabled, the node
  // closest to the device (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID).
  std::optional<int> numa_id;
};

// The CUmemLocation a pinned pool with these options is placed on.
// `device_numa_id` is the CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID of device
// `device_ordinal`, read only when ipc_enabled leaves numa_id unset.
// @throws std::invalid_argument for a negative numa_id; std::runtime_error when
// the node is needed and the device reports none (-1).
CUmemLocation pinned_pool_location(const PinnedMemoryResourceOptions& options, int device_ordinal,
                                   int device_numa_id);

// Stream-ordered page-locked host memory from a host memory pool
// (cuMemAllocFromPoolAsync on a pool placed on the host). Host pools are
// reachable only from the CPU until given access; the resource grants every
// device that supports host pools read-write access, so buffers are usable
// on all of them.
class PinnedMemoryResource final : public MemoryPool {
 public:
  // The driver's current pinned host pool (cuMemGetMemPool), which the driver
  // keeps. `device`'s primary context makes the allocation calls on the
  // default streams.
  explicit PinnedMemoryResource(const Device& device);
  // A new host pool (cuMemPoolCreate).
  PinnedMemoryResource(const Device& device, const PinnedMemoryResourceOptions& options);
  // A pool another process exported with export_ipc_handle().
  static std::shared_ptr<PinnedMemoryResource> from_ipc_handle(const Device& device, const IpcPoolHandle& handle);

  bool is_device_accessible() const noexcept override { return true; }
  bool is_host_accessible() const noexcept override { return true; }
  int device_id() const noexcept override { return -1; }

  // The NUMA node the pool is placed on; -1 when the system chooses, and for
  // an imported pool (the driver does not report it).
  int numa_id() const noexcept { return numa_id_; }

 private:
  PinnedMemoryResource(const Device& device, CUmemoryPool pool, bool owns_pool, bool ipc_enabled, bool imported,
                       int numa_id);
  // cuMemPoolSetAccess for every device that supports this kind of host pool
  // and has no access yet.
  void grant_device_access();

  int numa_id_ = -1;
};

// Page-locked host memory from cuMemHostAlloc (portable to every context and
// mapped into the device address space), as CUDA had before host pools.
// Allocation is not stream-ordered; deallocate first waits for the stream,
// since queued copies may still read the memory.
class LegacyPinnedMemoryResource final : public MemoryResource {
 public:
  // `device`'s primary context performs the allocation calls.
  explicit LegacyPinnedMemoryResource(const Device& device);

  void* allocate(std::size_t bytes, StreamRef stream) override;
  void deallocate(void* ptr, std::size_t bytes, StreamRef stream) override;
  bool is_device_accessible() const noexcept override { return true; }
  bool is_host_accessible() const noexcept override { return true; }
  int device_id() const noexcept override { return -1; }

 private:
  Device device_;
};

struct ManagedMemoryResourceOptions {
  // Where the pool's pages prefer to live (a device, the host or a host NUMA
  // node). Unset: no preference (CU_MEM_LOCATION_TYPE_NONE).
  std::optional<CUmemLocation> preferred_location;
};

// Unified memory, migrated between host and devices on demand. Two kinds:
// - cuMemAllocManaged (CU_MEM_ATTACH_GLOBAL), made from a Device alone: as
//   with pinned memory, deallocate waits for the stream first;
// - stream-ordered, from a managed memory pool (CUDA 13:
//   cuMemAllocFromPoolAsync / cuMemFreeAsync on a pool of allocation type
//   CU_MEM_ALLOCATION_TYPE_MANAGED): the current pool for a location
//   (current_pool), or a pool of its own made from options, destroyed with
//   the resource once its allocations are freed.
// `device`'s primary context performs the driver calls.
class ManagedMemoryResource final : public MemoryResource {
 public:
  explicit ManagedMemoryResource(const Device& device);
  // A new managed pool (cuMemPoolCreate).
  ManagedMemoryResource(const Device& device, const ManagedMemoryResourceOptions& options);
  // The current managed pool for `location` (cuMemGetMemPool); location type
  // CU_MEM_LOCATION_TYPE_NONE asks for the pool without a preferred location.
  static std::shared_ptr<ManagedMemoryResource> current_pool(const Device& device, CUmemLocation location);

  ~ManagedMemoryResource() override;
  ManagedMemoryResource(const ManagedMemoryResource&) = delete;
  ManagedMemoryResource& operator=(const ManagedMemoryResource&) = delete;

  // @throws std::out_of_range for 0 bytes.
  void* allocate(std::size_t bytes, StreamRef stream) override;
  void deallocate(void* ptr, std::size_t bytes, StreamRef stream) override;
  bool is_device_accessible() const noexcept override { return true; }
  bool is_host_accessible() const noexcept override { return true; }
  int device_id() const noexcept override { return device_.ordinal(); }

  // The pool, or null for cuMemAllocManaged memory.
  CUmemoryPool handle() const noexcept { return pool_; }
  bool owns_pool() const noexcept { return owns_pool_; }
  const Device& device() const noexcept { return device_; }

 private:
  struct Current {};
  ManagedMemoryResource(const Device& device, CUmemoryPool pool, Current);

  Device device_;
  CUmemoryPool pool_ = nullptr;
  bool owns_pool_ = false;
};

// The driver's own cuStreamIsCapturing, cuMemAllocFromPoolAsync and
// cuMemFreeAsync, the ones a pool's allocate and deallocate (MemoryPool's,
// ManagedMemoryResource's over a pool) reach through cubind::raw, for a
// binding that makes a pool's calls on a stream of its own itself on its
// busiest path (as launch_kernel_ex_entry): the same calls, with the virtual
// calls, checks and guards such a stream does not need left out. The caller
// keeps the pool's rules: no allocation on a capturing stream, a default
// stream left to the pool (its context current around the call), the status
// checked.
// @throws LoaderError where the driver cannot be loaded
struct PoolEntryPoints {
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*);
  CUresult (*alloc_from_pool_async)(CUdeviceptr*, std::size_t, CUmemoryPool, CUstream);
  CUresult (*free_async)(CUdeviceptr, CUstream);
};
PoolEntryPoints pool_entry_points();

}  // namespace cubind
