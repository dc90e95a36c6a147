/// An int32 result as it leaves VTA: a STORE keeps the low 8 bits of each accumulator lane, so a
/// program stores an int32 tensor as four int8 planes (the low byte, then the accumulator
/// shifted right by 8, ...), and the host puts them back together.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessel::vta {

/// int32 values from their four byte planes (plane p holds byte p of every value).
std::vector<int32_t> joinBytePlanes(const std::vector<int8_t>& planes);
/// The same into `values` (planes.size() / 4 of them); `planes` holds 4 · count bytes.
void joinBytePlanes(const int8_t* planes, size_t count, int32_t* values);

}  // namespace tessel::vta
