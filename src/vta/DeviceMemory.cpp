#include "vta/DeviceMemory.h"

#include <cstring>
#include <new>

#include "support/Error.h"

namespace tessel::vta {

namespace {
uint64_t roundUpToPage(uint64_t bytes) {
  const uint64_t pages = bytes == 0 ? 1 : (bytes + DeviceMemory::kPageBytes - 1) / DeviceMemory::kPageBytes;
  return pages * DeviceMemory::kPageBytes;
}
}  // namespace

void DeviceMemory::PageDeleter::operator()(uint8_t* pointer) const {
  ::operator delete[](pointer, std::align_val_t{kPageBytes});
}

DeviceMemory::DeviceMemory() { freeRanges_[kPageBytes] = kAddressLimit - kPageBytes; }

DeviceMemory::~DeviceMemory() = default;

void DeviceMemory::claim(uint64_t address, uint64_t bytes) {
  const uint64_t length = roundUpToPage(bytes);
  // The free range holding [address, address + length), split around it.
  auto range = freeRanges_.upper_bound(address);
  TESSEL_CHECK(range != freeRanges_.begin(), "VTA DRAM: address {:#x} is not free", address);
  --range;
  const uint64_t start = range->first, end = range->first + range->second;
  TESSEL_CHECK(address + length <= end, "VTA DRAM: range [{:#x}, {:#x}) is not free", address,
               address + length);
  freeRanges_.erase(range);
  if (start < address) freeRanges_[start] = address - start;
  if (address + length < end) freeRanges_[address + length] = end - address - length;

  auto* memory = static_cast<uint8_t*>(::operator new[](length, std::align_val_t{kPageBytes}));
  std::memset(memory, 0, length);
  addressOfPointer_[reinterpret_cast<uintptr_t>(memory)] = address;
  allocations_.emplace(address, Allocation{std::unique_ptr<uint8_t[], PageDeleter>(memory), bytes});
}

uint64_t DeviceMemory::allocate(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const uint64_t length = roundUpToPage(bytes);
  for (const auto& [start, size] : freeRanges_) {
    if (size >= length) {
      const uint64_t address = start;
      claim(address, bytes);
      return address;
    }
  }
  fail("VTA DRAM: cannot allocate {} bytes: the 4 GiB device address space is exhausted", bytes);
}

void DeviceMemory::allocateAt(uint64_t address, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  TESSEL_CHECK(address % kPageBytes == 0 && address >= kPageBytes && address < kAddressLimit,
               "VTA DRAM: address {:#x} is not a page-aligned device address", address);
  claim(address, bytes);
}

void DeviceMemory::release(uint64_t address) {
  std::lock_guard lock(mutex_);
  auto found = allocations_.find(address);
  TESSEL_CHECK(found != allocations_.end(), "VTA DRAM: no allocation starts at {:#x}", address);
  uint64_t start = address, length = roundUpToPage(found->second.bytes);
  addressOfPointer_.erase(reinterpret_cast<uintptr_t>(found->second.data.get()));
  allocations_.erase(found);
  // Give the range back, merged with free neighbours so large allocations stay possible.
  auto next = freeRanges_.lower_bound(start);
  if (next != freeRanges_.end() && next->first == start + length) {
    length += next->second;
    next = freeRanges_.erase(next);
  }
  if (next != freeRanges_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      length += previous->second;
      freeRanges_.erase(previous);
    }
  }
  freeRanges_[start] = length;
}

uint8_t* DeviceMemory::find(uint64_t address, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  auto found = allocations_.upper_bound(address);
  if (found == allocations_.begin()) return nullptr;
  --found;
  const uint64_t offset = address - found->first;
  if (offset > found->second.bytes || bytes > found->second.bytes - offset) return nullptr;
  return found->second.data.get() + offset;
}

uint8_t* DeviceMemory::at(uint64_t address, uint64_t bytes) {
  uint8_t* pointer = find(address, bytes);
  TESSEL_CHECK(pointer != nullptr,
               "VTA DRAM: bytes [{:#x}, {:#x}) are not inside one allocation", address,
               address + bytes);
  return pointer;
}

uint64_t DeviceMemory::physicalAddress(const void* hostPointer) const {
  std::lock_guard lock(mutex_);
  const auto pointer = reinterpret_cast<uintptr_t>(hostPointer);
  auto found = addressOfPointer_.upper_bound(pointer);
  if (found != addressOfPointer_.begin()) {
    --found;
    const uint64_t offset = pointer - found->first;
    const Allocation& allocation = allocations_.at(found->second);
    if (offset < allocation.bytes || offset == 0) return found->second + offset;
  }
  fail("VTA DRAM: host pointer {} is not inside a device allocation", hostPointer);
}

void DeviceMemory::write(uint64_t address, const void* source, uint64_t bytes) {
  if (bytes == 0) return;
  std::memcpy(at(address, bytes), source, bytes);
}

void DeviceMemory::read(uint64_t address, void* destination, uint64_t bytes) {
  if (bytes == 0) return;
  std::memcpy(destination, at(address, bytes), bytes);
}

std::vector<DeviceMemory::AllocationInfo> DeviceMemory::allocations() const {
  std::lock_guard lock(mutex_);
  std::vector<AllocationInfo> result;
  for (const auto& [address, allocation] : allocations_) result.push_back({address, allocation.bytes});
  return result;
}

}  // namespace tessel::vta
