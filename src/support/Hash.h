/// A stable 128-bit hash (two independent FNV-1a streams) for workload keys and cache keys.
/// Stable means: the same bytes give the same hex string on every run and every machine.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

class StableHasher {
 public:
  StableHasher& add(std::string_view bytes);
  StableHasher& add(int64_t value);
  StableHasher& add(double value);
  /// 32 lowercase hex digits.
  std::string hex() const;
  uint64_t low() const { return a_; }

 private:
  uint64_t a_ = 0xcbf29ce484222325ull;
  uint64_t b_ = 0x84222325cbf29ce4ull;
};

}  // namespace tessel
