/// The ways to tile a loop: every list of `count` inner extents (outermost first) whose product
/// divides the loop's extent, with the innermost at most a bound. Random annotation samples
/// one uniformly; the tile-size mutation moves a factor between levels within the same set.
/// Lists are enumerated once per (extent, count, bound) and kept.
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace tessel::tune::ansor {

class SplitFactorizations {
 public:
  explicit SplitFactorizations(int64_t maxInnermost = 64) : maxInnermost_(maxInnermost) {}

  /// Every factor list for a loop of `extent` split into `count` + 1 levels.
  const std::vector<std::vector<int64_t>>& all(int64_t extent, size_t count);
  /// One of them, uniformly.
  const std::vector<int64_t>& sample(int64_t extent, size_t count, std::mt19937_64& rng);

  int64_t maxInnermost() const { return maxInnermost_; }

 private:
  int64_t maxInnermost_;
  std::map<std::pair<int64_t, size_t>, std::vector<std::vector<int64_t>>> memo_;
};

/// The divisors of n in increasing order.
std::vector<int64_t> divisorsOf(int64_t n);

}  // namespace tessel::tune::ansor
