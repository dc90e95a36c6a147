/// Sketches: the loop structures the auto-scheduler samples from, made by the CPU sketch
/// rules from the compute DAG alone. A sketch is a step list whose tile sizes are holes: every
/// `split` in it has placeholder factors of 1, which random annotation (Annotation.h) fills by
/// factorization. `follow_split` steps copy a producer's tiles into its consumer, so they need
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
#include <string>
#include <vector>

#include "schedule/Steps.h"

namespace tessel::tune::ansor {

struct SketchOptions {
  std::string tileStructure = "SSRSRS";  ///< one letter per tile level, S spatial, R reduce, outermost first
  std::vector<int> fusionLevels = {1, 2};  ///< the consumer levels a tiled producer is computed in
  int cores = 1;                           ///< for the rfactor rule's parallelism test
};

struct Sketch {
  std::vector<schedule::StepPtr> steps;
  std::string description;  ///< the rules that made it, one phrase per applied rule
};

/// Every sketch of the DAG, in a fixed order. Always at least one (all stages skipped).
std::vector<Sketch> generateSketches(const te::ComputeDAG& dag, const SketchOptions& options = {});

}  // namespace tessel::tune::ansor
