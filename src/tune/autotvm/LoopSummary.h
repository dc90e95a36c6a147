/// A cheap summary of the loop nests a scheduled State will lower to, for the cost model's
/// features: per computed stage, its loops from the outermost (those of the stages it is
/// computed inside, then its own) to the innermost, with extents and annotations, and per
/// tensor it stores or loads, how each loop moves through that tensor (the loop's coefficient
/// in every index dimension). It reads the State and the ops' index expressions directly
/// instead of lowering, because lowering costs milliseconds per config and the tuner scores
/// tens of thousands of configs; the price is approximation (a fused loop counts as its
/// innermost part, non-linear indices as their linear part, footprints as boxes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "schedule/State.h"

namespace tessel::tune::autotvm {

struct SummaryLoop {
  int64_t extent = 1;
  schedule::Annotation annotation = schedule::Annotation::None;
  bool reduce = false;
};

/// One tensor a stage touches, as seen from every loop of the stage's nest.
struct SummaryAccess {
  std::string tensor;
  bool isStore = false;
  int64_t elementBytes = 4;
  std::vector<int64_t> shape;
  std::vector<int64_t> flatStrides;          ///< row-major strides of `shape`, in elements
  std::vector<std::vector<int64_t>> coefficients;  ///< [loop][dimension]: index change per loop step
};

struct StageSummary {
  std::string name;
  std::vector<SummaryLoop> loops;  ///< outermost first
  std::vector<SummaryAccess> accesses;  ///< the store first, then loads in order of first appearance, one per tensor
  double iterations() const;       ///< product of the loops' extents
};

/// The computed stages (neither placeholders nor inlined) in stage order.
std::vector<StageSummary> summarizeLoops(const schedule::State& state);

}  // namespace tessel::tune::autotvm
