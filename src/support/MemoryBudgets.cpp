#include "support/MemoryBudgets.h"

#include <fmt/format.h>

namespace tessel::budgets {

std::optional<int64_t> productWithin(const std::vector<int64_t>& factors, int64_t limit) {
  for (int64_t f : factors)
    if (f < 0) return std::nullopt;
  for (int64_t f : factors)
    if (f == 0) return limit >= 0 ? std::optional<int64_t>(0) : std::nullopt;
  int64_t product = 1;
  for (int64_t f : factors) {
    if (product > limit / f) return std::nullopt;
    product *= f;
  }
  if (product > limit) return std::nullopt;
  return product;
}

std::string byteCount(uint64_t bytes) {
  const char* units[] = {"MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < (uint64_t(1) << 20)) return fmt::format("{} bytes", bytes);
  double scaled = double(bytes) / double(uint64_t(1) << 20);
  size_t unit = 0;
  while (scaled >= 1024 && unit + 1 < std::size(units)) {
    scaled /= 1024;
    ++unit;
  }
  return fmt::format("{} bytes ({:.1f} {})", bytes, scaled, units[unit]);
}

}  // namespace tessel::budgets
