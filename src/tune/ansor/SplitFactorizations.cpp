#include "tune/ansor/SplitFactorizations.h"

#include "support/Error.h"

namespace tessel::tune::ansor {

std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

const std::vector<std::vector<int64_t>>& SplitFactorizations::all(int64_t extent, size_t count) {
  TESSEL_CHECK(extent >= 1 && count >= 1, "split factorizations need an extent >= 1 and a count >= 1, got {} and {}", extent, count);
  auto key = std::make_pair(extent, count);
  auto found = memo_.find(key);
  if (found != memo_.end()) return found->second;
  std::vector<std::vector<int64_t>> lists;
  std::vector<int64_t> current;
  // Level by level, outermost inner level first: each factor divides what the outer ones left.
  auto extend = [&](auto&& self, int64_t left) -> void {
    if (current.size() == count) {
      if (current.back() <= maxInnermost_) lists.push_back(current);
      return;
    }
    for (int64_t d : divisorsOf(left)) {
      current.push_back(d);
      self(self, left / d);
      current.pop_back();
    }
  };
  extend(extend, extent);
  return memo_.emplace(key, std::move(lists)).first->second;
}

const std::vector<int64_t>& SplitFactorizations::sample(int64_t extent, size_t count, std::mt19937_64& rng) {
  const auto& lists = all(extent, count);  // never empty: all ones is always a factorization
  return lists[std::uniform_int_distribution<size_t>(0, lists.size() - 1)(rng)];
}

}  // namespace tessel::tune::ansor
