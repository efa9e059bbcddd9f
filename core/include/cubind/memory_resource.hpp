// Where Buffers get their memory. MemoryResource is the interface; cubind
// provides a stream-ordered device pool, pinned host memory and managed memory.
// Resources are shared (std::shared_ptr) by the buffers they allocated, so a
// resource lives as long as its last buffer.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

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

// Stream-ordered device memory from a memory pool (cuMemAllocFromPoolAsync,
// cuMemFreeAsync). Either the device's default pool, which the device keeps,
// or a pool of its own, created or imported here and destroyed with the
// resource (once its outstanding allocations are freed).
class DeviceMemoryResource final : public MemoryResource {
 public:
  // The device's default pool (cuDeviceGetDefaultMemPool).
  explicit DeviceMemoryResource(const Device& device);
  // A new pool on the device (cuMemPoolCreate).
  DeviceMemoryResource(const Device& device, const DeviceMemoryResourceOptions& options);
  // A pool another process exported with export_ipc_handle()
  // (cuMemPoolImportFromShareableHandle). The descriptor is not consumed.
  static std::shared_ptr<DeviceMemoryResource> from_ipc_handle(const Device& device, const IpcPoolHandle& handle);

  ~DeviceMemoryResource() override;
  DeviceMemoryResource(const DeviceMemoryResource&) = delete;
  DeviceMemoryResource& operator=(const DeviceMemoryResource&) = delete;

  // @throws std::out_of_range for 0 bytes; std::invalid_argument when the
  // stream belongs to another context than the device's primary context.
  void* allocate(std::size_t bytes, StreamRef stream) override;
  void deallocate(void* ptr, std::size_t bytes, StreamRef stream) override;
  bool is_device_accessible() const noexcept override { return true; }
  bool is_host_accessible() const noexcept override { return false; }
  int device_id() const noexcept override { return device_.ordinal(); }

  CUmemoryPool handle() const noexcept { return pool_; }
  const Device& device() const noexcept { return device_; }
  bool owns_pool() const noexcept { return owns_pool_; }

  std::uint64_t release_threshold() const;
  void set_release_threshold(std::uint64_t bytes);
  // Bytes handed out and not yet freed (CU_MEMPOOL_ATTR_USED_MEM_CURRENT).
  std::uint64_t used_memory() const;
  // Bytes the pool holds from the system (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT).
  std::uint64_t reserved_memory() const;
  // Returns reserved memory beyond `bytes_to_keep` to the system (cuMemPoolTrimTo).
  void trim_to(std::size_t bytes_to_keep);

  // Lets `peer` read and write this pool's allocations (cuMemPoolSetAccess).
  // @throws std::invalid_argument when peer is the pool's own device.
  void grant_peer_access(const Device& peer);
  void revoke_peer_access(const Device& peer);
  // cuMemPoolGetAccess: always true for the pool's own device.
  bool is_accessible_from(const Device& peer) const;

  // The pool as a file descriptor for another process
  // (cuMemPoolExportToShareableHandle).
  // @throws std::logic_error unless created with ipc_enabled.
  IpcPoolHandle export_ipc_handle() const;
  bool is_ipc_enabled() const noexcept { return ipc_enabled_; }

 private:
  struct Imported {};
  DeviceMemoryResource(const Device& device, CUmemoryPool imported, Imported);
  void set_access(const Device& peer, CUmemAccess_flags flags, const char* where);

  Device device_;
  CUcontext context_;
  CUmemoryPool pool_ = nullptr;
  bool owns_pool_ = false;
  bool ipc_enabled_ = false;
};

// Page-locked host memory (cuMemHostAlloc, portable to every context and
// mapped into the device address space). Allocation is not stream-ordered;
// deallocate first waits for the stream, since queued copies may still read
// the memory.
class PinnedMemoryResource final : public MemoryResource {
 public:
  // `device`'s primary context performs the allocation calls.
  explicit PinnedMemoryResource(const Device& device);

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

}  // namespace cubind
