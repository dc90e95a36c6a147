#include "tune/autotvm/MachineFeatures.h"

#include <algorithm>
#include <cmath>

namespace tessel::tune::autotvm {

namespace {

/// Accesses per distinct byte under the outermost loop whose footprint fits `cacheBytes`.
double reuseWithin(const std::vector<LoopStats>& stats, double cacheBytes) {
  double best = 0;
  for (size_t i = stats.size(); i-- > 0;) {
    double footprint = 0, accesses = 0;
    for (const AccessStats& a : stats[i].accesses) {
      footprint += a.touchedBytes;
      accesses += a.count;
    }
    if (footprint > cacheBytes || footprint <= 0) break;  // footprints only grow outwards
    best = accesses / footprint;
  }
  return best;
}

}  // namespace

void machineStageFeatures(const StageSummary& stage, const std::vector<LoopStats>& stats, const target::CpuMachine* machine,
                          float* out) {
  std::fill(out, out + kMachineStageLength, 0.f);
  if (!machine || stats.empty()) return;
  const double elementBytes = stage.accesses.empty() ? 4.0 : double(stage.accesses.front().elementBytes);
  const double vectorBytes = std::max(1, machine->vectorBytes);

  double vectorLanes = 0, parallel = 1;
  bool anyParallel = false;
  for (const LoopStats& s : stats) {
    LoopClass c = classify(s.loop.annotation);
    if (c == LoopClass::Vectorize) vectorLanes = std::max(vectorLanes, double(s.loop.extent));
    if (c == LoopClass::Parallel) {
      parallel *= double(s.loop.extent);
      anyParallel = true;
    }
  }
  out[0] = logScale(vectorLanes * elementBytes / vectorBytes);

  // The register tile: the innermost run of unrolled or vectorized loops that are not
  // reductions (a conv's rows x vectors x lanes under its reduction loops).
  double tileElements = 1;
  bool tiled = false;
  for (size_t i = stats.size(); i-- > 0;) {
    LoopClass c = classify(stats[i].loop.annotation);
    if ((c != LoopClass::Unroll && c != LoopClass::Vectorize) || stats[i].loop.reduce) break;
    tileElements *= double(stats[i].loop.extent);
    tiled = true;
  }
  if (tiled) {
    double registers = std::ceil(tileElements * elementBytes / vectorBytes);
    out[1] = logScale(registers / std::max(1, machine->vectorRegisters));
  }

  if (anyParallel) {
    double cores = std::max(1, machine->cores);
    out[2] = logScale(parallel / cores);
    out[3] = float(parallel / (cores * std::ceil(parallel / cores)));
  }

  const double caches[3] = {double(machine->l1dBytes), double(machine->l2Bytes), double(machine->llcBytes)};
  for (size_t k = 0; k < 3; ++k)
    if (caches[k] > 0) out[4 + k] = logScale(reuseWithin(stats, caches[k]));
  double whole = 0;
  for (const AccessStats& a : stats.front().accesses) whole += a.touchedBytes;
  if (caches[2] > 0) out[7] = logScale(whole / caches[2]);
}

}  // namespace tessel::tune::autotvm
