#include "support/Hash.h"

#include <cstring>
#include <fmt/format.h>

namespace tessel {

StableHasher& StableHasher::add(std::string_view bytes) {
  for (unsigned char c : bytes) {
    a_ = (a_ ^ c) * 0x100000001b3ull;
    b_ = (b_ ^ (c + 0x9e)) * 0x1000193ull * 0x100000001b3ull + 0x7f4a7c15ull;
  }
  // Length terminator so that ("ab","c") and ("a","bc") differ.
  a_ = (a_ ^ bytes.size()) * 0x100000001b3ull;
  b_ = (b_ ^ (bytes.size() * 31)) * 0x100000001b3ull;
  return *this;
}

StableHasher& StableHasher::add(int64_t value) {
  char buf[8];
  std::memcpy(buf, &value, 8);
  return add(std::string_view(buf, 8));
}

StableHasher& StableHasher::add(double value) {
  char buf[8];
  std::memcpy(buf, &value, 8);
  return add(std::string_view(buf, 8));
}

std::string StableHasher::hex() const { return fmt::format("{:016x}{:016x}", a_, b_); }

}  // namespace tessel
