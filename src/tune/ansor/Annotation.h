/// Random annotation: a sketch made into a complete schedule, the initial population of the
/// evolutionary search. In order:
///
///   tile sizes        every split of the sketch gets factors sampled uniformly from the
///                     loop's factorizations (innermost at most 64)
///   compute location  a stage the sketch left alone at the root (not tiled, not an output)
///                     may move into a loop of its consumer, up to its first reduce loop
///   parallel          at each root stage its outer spatial loops (not past one that holds
///                     another stage) are fused until the loop has more than 16 iterations per
///                     core (TVM's InitParallel), and parallelized
///   vectorize         at each stage a random number of its inner spatial loops, at most 16
///                     iterations in all, is fused and vectorized
///   unroll            each root stage with a reduction or tiles, or holding other stages,
///                     gets `auto_unroll_max_step` from {0, 16, 64, 512} on its outermost loop
///
/// The result is a plain step list: it replays with `replay` alone. A GPU sketch (options.gpu
/// set) is annotated by the GPU rules instead (GpuAnnotation.h).
#pragma once
#include <optional>
#include <random>
#include <vector>

#include "ops/Schedules.h"
#include "target/HostCpu.h"
#include "passes/GpuLimits.h"

#include "schedule/Steps.h"
#include "tune/ansor/Sketches.h"
#include "tune/ansor/SplitFactorizations.h"

namespace tessel::tune::ansor {

struct AnnotationOptions {
  /// The longest loop vectorized: one vector register of float32 on the machine.
  int64_t maxVectorSize = target::hostCpu().lanes(4);
  /// The kernel threads the schedules are for: the parallel loop's size follows from it.
  int64_t cores = target::hostCpu().cores;
  std::vector<int64_t> autoUnrollSteps = {0, 16, 64, 512};
  /// Set: GPU sketches annotated for a device with these limits (GpuAnnotation.h).
  std::optional<passes::GpuLimits> gpu;

  /// The CPU annotation's options for `machine`: its vector width and cores.
  static AnnotationOptions forCpu(const target::CpuMachine& machine);
  /// The GPU annotation's options: TVM's GPU unroll steps {0, 16, 64, 512, 1024}.
  static AnnotationOptions forGpu(const passes::GpuLimits& limits);
};

/// A complete schedule: its steps, of which the first `sketchLength` are its sketch's with the
/// tile sizes filled (mutations change those only in their factors), and its state.
struct AnnotatedState {
  std::vector<schedule::StepPtr> steps;
  size_t sketchLength = 0;
  schedule::State state;  ///< what the steps replay to
};

/// One random schedule of the sketch. Throws Error naming the sketch if a step it makes does
/// not apply (a bug in the sketch rules or here, never in the input).
AnnotatedState annotateRandomly(const te::ComputeDAG& dag, const Sketch& sketch, SplitFactorizations& factorizations,
                                std::mt19937_64& rng, const AnnotationOptions& options = {});

/// The outer loops of a root stage that `parallel` may fuse, outermost first: spatial, up to the
/// first reduce loop and the first loop holding another stage, never the innermost loop.
std::vector<std::string> parallelizableOuterLoops(const schedule::State& state, const std::string& stage);

/// How many of a root stage's `outer` loops (parallelizableOuterLoops) a parallel loop may
/// fuse: each count whose fused loop has at least 4 iterations per core, or all of them when
/// even that is fewer. A parallel loop of a few iterations cannot be rebalanced when another
/// program slows one core (the kernels' loop lets an idle thread take a busy one's iterations),
/// and a tuner measuring at a quiet moment would not see that.
std::vector<size_t> parallelFuseCounts(const schedule::State& state, const std::string& stage, const std::vector<std::string>& outer,
                                       const AnnotationOptions& options);

/// False if a vectorized loop holds another stage or lost its constant extent (a later
/// compute_at can do either): lowering cannot vectorize such a loop.
bool vectorizedLoopsAreSound(const schedule::State& state);

}  // namespace tessel::tune::ansor
