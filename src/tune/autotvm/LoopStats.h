/// Per-loop statistics of a stage's loop nest (LoopSummary.h), shared by the feature kinds that
/// read the nest (Features.h, MachineFeatures.h): for every loop, the products of the extents
/// above and below it and, per tensor touched, the stride of one step, the distinct bytes
/// under the loop, the accesses under it and their reuse. Footprints are boxes that grow from
/// the innermost loop outwards.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "tune/autotvm/LoopSummary.h"

namespace tessel::tune::autotvm {

/// The scale of every feature value: log2(1 + x), negatives as 0.
inline float logScale(double x) { return float(std::log2(1.0 + std::max(0.0, x))); }

/// How a loop's iterations run: in turn, at once (parallel and every GPU binding), as the lanes
/// of a vector, or as unrolled copies (virtual threads too).
enum class LoopClass { None, Parallel, Vectorize, Unroll };
LoopClass classify(schedule::Annotation a);

struct AccessStats {
  double strideBytes = 0;   ///< how far one step of the loop moves in the tensor
  double touchedBytes = 0;  ///< distinct bytes under the loop (a box per dimension)
  double count = 0;         ///< accesses under the loop
  double reuse = 0;         ///< count / distinct elements
};

struct LoopStats {
  SummaryLoop loop;
  double above = 1, below = 1;  ///< products of extents, each including this loop
  std::vector<AccessStats> accesses;  ///< one per access of the stage, in its order
};

/// Statistics of every loop of a stage, outermost first; a dimension's span is
/// 1 + sum |coefficient| * (extent - 1), at most its size.
std::vector<LoopStats> loopStats(const StageSummary& stage);

}  // namespace tessel::tune::autotvm
