/// The machine-readable line every bench prints for each figure: `BENCH <name> <value> <unit>`,
/// and the load average every bench prints with its figures.
#pragma once
#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace tessel::bench {

inline void report(const std::string& name, double value, const std::string& unit) {
  fmt::print("BENCH {} {:.4g} {}\n", name, value, unit);
  std::fflush(stdout);
}

/// /proc/loadavg's three averages ("-1.00 ..." when unreadable).
inline std::string machineLoad() {
  double load[3] = {0, 0, 0};
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = load[1] = load[2] = -1;
    std::fclose(f);
  }
  return fmt::format("{:.2f} {:.2f} {:.2f}", load[0], load[1], load[2]);
}

}  // namespace tessel::bench
