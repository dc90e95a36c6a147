/// Sketches: the loop structures the auto-scheduler samples from, made by the CPU sketch rules
/// (below) or the GPU sketch rules (GpuSketches.h) from the compute DAG alone. A sketch is a
/// step list whose tile sizes are holes: every `split` in it by factors has placeholder factors
/// of 1, which random annotation (Annotation.h) fills by factorization. `follow_split` steps copy a producer's tiles into its consumer, so they need
/// no filling.
///
/// The stages are visited from the last to the first; at each the rules are tried in order,
/// each either skipping the stage, applying (the unchanged state also goes on to the next
/// rules) or applying and skipping the rest:
///
///   always inline          a strictly inlinable stage is inlined (apply, skip the rest)
///   add rfactor            a reduction lacking spatial parallelism (one reduce axis) is split
///                          and factored at the outer or at the inner part (apply)
///   add cache write        a stage that needs multi-level tiling but has no fusible consumer
///                          computes into a "local" cache stage, which the copy back then
///                          consumes element-wise (apply; the cache stage is visited next)
///   tiling with fusion     the "SSRSRS" tiling below, and the consumer split the same way at
///                          its outer 1 or 2 levels with the stage computed inside them (apply;
///                          apply and skip the rest after a cache write)
///   multi-level tiling     every spatial axis split into 4 levels, every reduce axis into 2,
///                          ordered S0 S1 R0 S2 R1 S3 (apply, skip the rest)
///   skip                   the stage stays as it is
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "passes/GpuLimits.h"
#include "schedule/Steps.h"

namespace tessel::tune::ansor {

struct SketchOptions {
  std::string tileStructure = "SSRSRS";  ///< one letter per tile level, S spatial, R reduce, outermost first
  std::vector<int> fusionLevels = {1, 2};  ///< the consumer levels a tiled producer is computed in
  int cores = 1;                           ///< for the rfactor rule's parallelism test
  /// Set: the GPU rules (GpuSketches.h) for a device with these limits instead of the CPU rules.
  std::optional<passes::GpuLimits> gpu;

  /// The GPU rules' options: TVM's GPU structure "SSSRRSRS" (its first three spatial levels
  /// become blockIdx, vthread and threadIdx) and fusion at level 3 (the thread level).
  static SketchOptions forGpu(const passes::GpuLimits& limits);
};

/// A product of a GPU sketch's tile sizes that the device bounds (the threads of a block, along
/// one dimension or in all, its virtual threads): random annotation samples the factors so that
/// the product stays within [atLeast, atMost] where it can.
struct TileProductBound {
  std::string what;  ///< e.g. "threads per block", for messages
  /// The factors multiplied: a split step's index in the sketch and the factor's index in it.
  std::vector<std::pair<size_t, size_t>> factors;
  int64_t atMost = 0;
  int64_t atLeast = 1;
};

struct Sketch {
  std::vector<schedule::StepPtr> steps;
  std::string description;  ///< the rules that made it, one phrase per applied rule
  std::vector<TileProductBound> bounds;  ///< GPU sketches: the products of tile sizes the device bounds
};

/// Every sketch of the DAG, in a fixed order. Always at least one (all stages skipped); by the
/// GPU rules when options.gpu is set (Error naming a stage no GPU rule can place).
std::vector<Sketch> generateSketches(const te::ComputeDAG& dag, const SketchOptions& options = {});

}  // namespace tessel::tune::ansor
