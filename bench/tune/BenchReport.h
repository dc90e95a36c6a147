/// The machine-readable line every bench prints for each figure: `BENCH <name> <value> <unit>`.
#pragma once
#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace tessel::bench {

inline void report(const std::string& name, double value, const std::string& unit) {
  fmt::print("BENCH {} {:.4g} {}\n", name, value, unit);
  std::fflush(stdout);
}

}  // namespace tessel::bench
