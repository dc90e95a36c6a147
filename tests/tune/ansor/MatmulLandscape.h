/// Test support: a synthetic cost landscape over the auto-scheduler's states of a 256x256x256
/// matmul, for tests of the search without compilers or timings. The throughput is read from
/// the state like a machine would feel it: the register tile (innermost i and j tiles), the
/// inner reduction tile, the unroll step and whether the outer loops run in parallel, each with
/// a smooth preference for one value (in log2), multiplied. The planted optimum — i tile 4, j
/// tile 16, reduce tile 8, unroll 64, parallel — scores 100; every other state less.
/// Deterministic.
#pragma once
#include <cmath>
#include <string>

#include "ops/Examples.h"
#include "schedule/State.h"

namespace tessel::ansortest {

inline te::ComputeDAG landscapeMatmul() { return ops::matmul(256, 256, 256); }

inline constexpr double kPlantedOptimum = 100;

/// The extent of the innermost tile of root axis `axis` of the stage (following its splits'
/// inner parts, whether or not they were fused later); the axis' extent when it is not split.
inline int64_t innermostTile(const schedule::Stage& s, const std::string& axis) {
  int current = -1;
  for (int r = 0; r < s.rootCount; ++r)
    if (s.iterator(r).name == axis) current = r;
  for (bool more = current >= 0; more;) {
    more = false;
    for (auto& rel : s.relations)
      if (rel.kind == schedule::IterRelation::Kind::Split && rel.parent == current) {
        current = rel.inner;
        more = true;
      }
  }
  return current >= 0 ? s.iterator(current).extent : 1;
}

inline double landscape(const schedule::State& state) {
  const schedule::Stage* tiled = nullptr;
  for (auto& s : state.stages())
    if (!s.isPlaceholder() && s.op->reduction()) tiled = &s;
  auto prefer = [](double value, double target, double width) {
    double d = std::log2(value) - std::log2(target);
    return std::exp(-d * d / (2 * width * width));
  };
  double score = kPlantedOptimum;
  score *= prefer(double(innermostTile(*tiled, "i")), 4, 1.0);
  score *= prefer(double(innermostTile(*tiled, "j")), 16, 1.0);
  score *= prefer(double(innermostTile(*tiled, "k")), 8, 1.2);
  int64_t unroll = -1;
  bool parallel = false;
  for (auto& s : state.stages())
    for (int id : s.leaves) {
      for (auto& [key, value] : s.iterator(id).pragmas)
        if (key == "auto_unroll_max_step") unroll = std::stoll(value);
      parallel = parallel || s.iterator(id).annotation == schedule::Annotation::Parallel;
    }
  score *= unroll == 64 ? 1.0 : unroll == 16 ? 0.9 : unroll == 512 ? 0.85 : 0.8;
  score *= parallel ? 1.0 : 0.7;
  return score;
}

}  // namespace tessel::ansortest
