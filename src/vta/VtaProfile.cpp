#include "vta/VtaProfile.h"

#include <fmt/format.h>

namespace tessel::vta {

double gemmUtilization(const VtaGroupRun& run, const TimingParameters& timing) {
  return run.cycles == 0 ? 0.0 : double(run.gemms * timing.gemmCyclesPerMicroOp) / double(run.cycles);
}

std::string formatVtaProfile(const std::vector<VtaGroupRun>& runs, const TimingParameters& timing) {
  std::string out = fmt::format("{:<30} {:>19} {:>10} {:>8} {:>6} | {:>6} {:>6} {:>6} {:>6} | {:>6} {:>6}\n", "layer",
                                "tile rows,cols,ci,co,sets", "cycles", "ms", "GEMM%", "reset%", "ALU%", "ld_acc%", "wait%",
                                "load%", "store%");
  auto line = [&](const std::string& name, const std::string& tile, uint64_t cycles, uint64_t gemms, const RunProfile& p) {
    auto pct = [&](uint64_t part) { return cycles == 0 ? 0.0 : 100.0 * double(part) / double(cycles); };
    uint64_t computeBusy = p.gemmCycles + p.resetCycles + p.aluCycles + p.computeLoadCycles;
    uint64_t wait = cycles > computeBusy ? cycles - computeBusy : 0;
    out += fmt::format("{:<30} {:>19} {:>10} {:>8.3f} {:>6.1f} | {:>6.1f} {:>6.1f} {:>6.1f} {:>6.1f} | {:>6.1f} {:>6.1f}\n", name,
                       tile, cycles, timing.seconds(cycles) * 1e3, pct(gemms * timing.gemmCyclesPerMicroOp), pct(p.resetCycles),
                       pct(p.aluCycles), pct(p.computeLoadCycles), pct(wait), pct(p.loadCycles), pct(p.storeCycles));
  };
  RunProfile total;
  uint64_t gemms = 0;
  for (const VtaGroupRun& r : runs) {
    const Conv2dTiling& t = r.tiling;
    line(r.name.substr(0, 30), fmt::format("{},{},{},{},{}x{}", t.rows, t.columns, t.inputBlocks, t.outputBlocks, t.loadBufferSets,
                                           t.accumulatorSets),
         r.cycles, r.gemms, r.profile);
    total += r.profile;
    gemms += r.gemms;
  }
  line("total", "", total.cycles, gemms, total);
  out += "GEMM%: GEMM-core utilization (GEMM micro-op cycles / cycles); reset, ALU, ld_acc (accumulator and micro-op loads) "
         "and wait (for tokens: loads or stores not done) are the rest of the compute module's time; load and store: those "
         "modules' busy time\n";
  return out;
}

}  // namespace tessel::vta
