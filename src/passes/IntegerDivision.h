/// Integer division rounding towards minus and plus infinity, as the passes that solve linear
/// guards for a loop's range need (C++'s `/` rounds towards zero).
#pragma once
#include <cstdint>

namespace tessel::passes {

inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

}  // namespace tessel::passes
