/// The accelerator's DRAM as the simulator sees it: page-aligned allocations named by physical
/// byte addresses below 4 GiB (LOAD/STORE address DRAM with a 32-bit element index), each backed
/// by host memory whose pointer stays valid until the allocation is released. Every access the
/// simulator makes is checked to lie inside one allocation, so a bad address in an instruction is
/// an error, never a stray write. Thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace tessel::vta {

class DeviceMemory {
 public:
  static constexpr uint64_t kPageBytes = 4096;
  /// The highest address + 1; physical address 0 is never handed out (it means "null").
  static constexpr uint64_t kAddressLimit = 1ull << 32;

  DeviceMemory();
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  /// A zero-filled allocation of at least `bytes` (0 allowed), page-aligned both as a physical
  /// address and as a host pointer. Throws Error when the address space is exhausted.
  uint64_t allocate(uint64_t bytes);
  /// The same at a chosen page-aligned address (used to load a serialized program's image);
  /// throws Error when the range is taken or outside the address space.
  void allocateAt(uint64_t address, uint64_t bytes);
  /// Frees the allocation that starts at `address`; throws Error when none does.
  void release(uint64_t address);

  /// Host memory for [address, address + bytes) when the range lies inside one allocation,
  /// null otherwise.
  uint8_t* find(uint64_t address, uint64_t bytes);
  /// The same, throwing Error that names the range when it is not inside one allocation.
  uint8_t* at(uint64_t address, uint64_t bytes);
  /// The physical address of a host pointer inside an allocation; throws Error otherwise.
  uint64_t physicalAddress(const void* hostPointer) const;

  void write(uint64_t address, const void* source, uint64_t bytes);
  void read(uint64_t address, void* destination, uint64_t bytes);

  struct AllocationInfo {
    uint64_t address;
    uint64_t bytes;
  };
  /// Live allocations in address order.
  std::vector<AllocationInfo> allocations() const;

 private:
  struct PageDeleter {
    void operator()(uint8_t* pointer) const;
  };
  struct Allocation {
    std::unique_ptr<uint8_t[], PageDeleter> data;
    uint64_t bytes;
  };
  void claim(uint64_t address, uint64_t bytes);

  mutable std::mutex mutex_;
  std::map<uint64_t, Allocation> allocations_;       // by physical address
  std::map<uintptr_t, uint64_t> addressOfPointer_;   // host pointer → physical address
  std::map<uint64_t, uint64_t> freeRanges_;          // start → length, page-aligned
};

}  // namespace tessel::vta
