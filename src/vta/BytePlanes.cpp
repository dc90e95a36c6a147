#include "vta/BytePlanes.h"

#include "support/Error.h"

namespace tessel::vta {

void joinBytePlanes(const int8_t* planes, size_t n, int32_t* values) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t v = uint32_t(uint8_t(planes[i])) | uint32_t(uint8_t(planes[n + i])) << 8 | uint32_t(uint8_t(planes[2 * n + i])) << 16 |
                 uint32_t(uint8_t(planes[3 * n + i])) << 24;
    values[i] = int32_t(v);
  }
}

std::vector<int32_t> joinBytePlanes(const std::vector<int8_t>& planes) {
  TESSEL_CHECK(planes.size() % 4 == 0, "{} bytes are not four byte planes", planes.size());
  std::vector<int32_t> values(planes.size() / 4);
  joinBytePlanes(planes.data(), values.size(), values.data());
  return values;
}

}  // namespace tessel::vta
