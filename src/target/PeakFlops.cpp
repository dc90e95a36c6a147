#include "target/PeakFlops.h"

#include <algorithm>
#include <fstream>

namespace tessel::target {

double hostMaxClockGhz() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  long long kilohertz = 0;
  if (!(in >> kilohertz) || kilohertz <= 0) return 0;
  return double(kilohertz) / 1e6;
}

double cpuPeakGflops(const CpuMachine& machine, double clockGhz) {
  double clock = clockGhz > 0 ? clockGhz : kClockCeilingGhz;
  double flopsPerCycle = 2.0 * std::max(1, machine.fmaUnits) * machine.lanes(4);
  return std::max(1, machine.cores) * flopsPerCycle * clock;
}

}  // namespace tessel::target
