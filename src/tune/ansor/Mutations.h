/// The mutations of the evolutionary search, each a small change to a complete schedule's step
/// list that is replayed to check it (TVM's CPU weights in brackets):
///
///   tile size         one split moves a divisor of one level's extent to another level,
///                     the innermost staying at most 64 (0.90; on a GPU, the block within the
///                     device's limits)
///   auto unroll       one auto_unroll_max_step takes another value of its set (0.04)
///   compute location  a stage the sketch did not place moves to the root or to another loop
///                     of its consumer (0.05)
///   parallel          a parallel loop fuses more or fewer outer loops, keeping at least 4
///                     iterations per core (0.01)
#pragma once
#include <optional>
#include <random>

#include "tune/ansor/Annotation.h"

namespace tessel::tune::ansor {

enum class MutationKind { TileSize, AutoUnroll, ComputeLocation, Parallel };

struct MutationWeights {
  double tileSize = 0.90, autoUnroll = 0.04, computeLocation = 0.05, parallel = 0.01;
  /// TVM's GPU weights: tile size 0.90, auto unroll 0.10 (a GPU sketch places and binds every
  /// stage itself, and nothing is parallel).
  static MutationWeights forGpu() { return {0.90, 0.10, 0.0, 0.0}; }
};

MutationKind pickMutation(const MutationWeights& weights, std::mt19937_64& rng);

/// A mutated copy of `parent`, or nothing when the mutation finds nothing to change in it or
/// its result does not replay (or could not be lowered; with options.gpu, or exceeds the
/// device's limits by GpuStateLimits.h's count: a tile-size change that would give a block too
/// many threads is no child).
std::optional<AnnotatedState> mutate(const te::ComputeDAG& dag, const AnnotatedState& parent, MutationKind kind,
                                     SplitFactorizations& factorizations, const AnnotationOptions& options, std::mt19937_64& rng);

/// The extent of a root axis (spatial or reduce) of a stage, by name, as its op defines it (or
/// the DAG's op of that name, for a stage that rfactor rewrote).
int64_t rootAxisExtent(const te::ComputeDAG& dag, const schedule::State& state, const std::string& stage, const std::string& axis);

/// The extent of the loop a split divides: a root axis's (rootAxisExtent), else the extent in
/// the state of the loop of that name (a fused loop a GPU sketch splits).
int64_t splitLoopExtent(const te::ComputeDAG& dag, const schedule::State& state, const std::string& stage, const std::string& loop);

}  // namespace tessel::tune::ansor
