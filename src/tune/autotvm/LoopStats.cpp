#include "tune/autotvm/LoopStats.h"

#include <algorithm>
#include <cmath>

namespace tessel::tune::autotvm {

LoopClass classify(schedule::Annotation a) {
  using schedule::Annotation;
  switch (a) {
    case Annotation::None: return LoopClass::None;
    case Annotation::Vectorize: return LoopClass::Vectorize;
    case Annotation::Unroll:
    case Annotation::VThread: return LoopClass::Unroll;
    default: return LoopClass::Parallel;  // parallel and every GPU binding run iterations concurrently
  }
}

std::vector<LoopStats> loopStats(const StageSummary& stage) {
  size_t n = stage.loops.size();
  std::vector<LoopStats> stats(n);
  double above = 1;
  for (size_t i = 0; i < n; ++i) {
    above *= double(stage.loops[i].extent);
    stats[i].loop = stage.loops[i];
    stats[i].above = above;
    stats[i].accesses.resize(stage.accesses.size());
  }
  for (size_t a = 0; a < stage.accesses.size(); ++a) {
    const SummaryAccess& access = stage.accesses[a];
    std::vector<double> span(access.shape.size(), 1.0);
    double below = 1;
    for (size_t i = n; i-- > 0;) {
      double extent = double(stage.loops[i].extent);
      below *= extent;
      double flatStride = 0;
      double distinct = 1;
      for (size_t d = 0; d < span.size(); ++d) {
        double c = double(access.coefficients[i][d]);
        flatStride += c * double(access.flatStrides[d]);
        span[d] = std::min(double(access.shape[d]), span[d] + std::abs(c) * (extent - 1));
        distinct *= span[d];
      }
      AccessStats& s = stats[i].accesses[a];
      s.strideBytes = std::abs(flatStride) * double(access.elementBytes);
      s.touchedBytes = distinct * double(access.elementBytes);
      s.count = below;
      s.reuse = below / distinct;
      stats[i].below = below;
    }
  }
  if (stage.accesses.empty()) {
    double below = 1;
    for (size_t i = n; i-- > 0;) stats[i].below = below *= double(stage.loops[i].extent);
  }
  return stats;
}

}  // namespace tessel::tune::autotvm
