// Private: a set of driver handles (pointers), safe to use from any thread,
// for registries that an object joins when made and leaves when destroyed.
// An open-addressing table (linear probing; a removal shifts back the entries
// probed past it, so there are no tombstones) that allocates only when it
// grows: adding and removing a handle is a hash, a lock and a few compares.
// The lock is one atomic flag (a thread that finds it taken yields): what it
// guards is that short, and a mutex's lock and unlock cost more than the rest.
// Not installed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <type_traits>

namespace cubind::detail {

template <typename Handle>
class HandleSet {
  static_assert(std::is_pointer_v<Handle>, "HandleSet keeps pointers (null marks an empty slot)");

 public:
  HandleSet() = default;
  HandleSet(const HandleSet&) = delete;
  HandleSet& operator=(const HandleSet&) = delete;
  ~HandleSet() { delete[] slots_; }

  // Adds a handle (not null); adding one already there changes nothing.
  void insert(Handle handle) {
    Guard guard(locked_);
    if ((count_ + 1) * 2 > capacity_) grow();
    std::size_t i = home(handle);
    for (; slots_[i] != nullptr; i = next(i)) {
      if (slots_[i] == handle) return;
    }
    slots_[i] = handle;
    ++count_;
  }

  // Removes a handle; one not there is ignored.
  void erase(Handle handle) noexcept {
    Guard guard(locked_);
    if (count_ == 0) return;
    std::size_t hole = home(handle);
    for (; slots_[hole] != handle; hole = next(hole)) {
      if (slots_[hole] == nullptr) return;
    }
    // An entry after the hole moves into it when the hole lies on the entry's
    // probe path (from its home slot to where it is), so that probing still
    // meets it before an empty slot.
    for (std::size_t j = next(hole); slots_[j] != nullptr; j = next(j)) {
      const std::size_t from_home = (j - home(slots_[j])) & (capacity_ - 1);
      if (from_home >= ((j - hole) & (capacity_ - 1))) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = nullptr;
    --count_;
  }

  bool contains(Handle handle) noexcept {
    Guard guard(locked_);
    if (count_ == 0) return false;
    for (std::size_t i = home(handle); slots_[i] != nullptr; i = next(i)) {
      if (slots_[i] == handle) return true;
    }
    return false;
  }

  std::size_t size() noexcept {
    Guard guard(locked_);
    return count_;
  }

 private:
  std::size_t home(Handle handle) const noexcept {
    // Fibonacci hashing: the high half of the product, masked to the table.
    const std::uint64_t key = reinterpret_cast<std::uintptr_t>(handle);
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (capacity_ - 1);
  }
  std::size_t next(std::size_t i) const noexcept { return (i + 1) & (capacity_ - 1); }

  // Doubles the table (64 slots at first), keeping it at most half full.
  void grow() {
    const std::size_t old_capacity = capacity_;
    Handle* old_slots = slots_;
    const std::size_t capacity = old_capacity == 0 ? 64 : old_capacity * 2;
    slots_ = new Handle[capacity]();
    capacity_ = capacity;
    for (std::size_t k = 0; k < old_capacity; ++k) {
      if (old_slots[k] == nullptr) continue;
      std::size_t i = home(old_slots[k]);
      while (slots_[i] != nullptr) i = next(i);
      slots_[i] = old_slots[k];
    }
    delete[] old_slots;
  }

  struct Guard {
    explicit Guard(std::atomic<bool>& flag) noexcept : flag_(flag) {
      while (flag_.exchange(true, std::memory_order_acquire)) {
        while (flag_.load(std::memory_order_relaxed)) std::this_thread::yield();
      }
    }
    ~Guard() { flag_.store(false, std::memory_order_release); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    std::atomic<bool>& flag_;
  };

  std::atomic<bool> locked_{false};
  Handle* slots_ = nullptr;
  std::size_t capacity_ = 0;  // a power of two, or 0 before the first handle
  std::size_t count_ = 0;
};

}  // namespace cubind::detail
