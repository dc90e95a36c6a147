/// The default CPU schedule of a fused function built from the operators of this folder: a
/// rule-based step list that is parallel and vectorized without any tuning. It is what a
/// network is compiled with before (or without) tuning records.
///
/// The rules, in order:
///  1. Element-wise and injective stages that are not outputs are inlined into their readers,
///     except the padding of an NCHW convolution (computed once at the root; an NHWC or
///     depthwise convolution's is inlined, and lowering skips the taps on the padding).
///  2. The anchor — the convolution, dense or matmul with the most FLOPs — gets a register tile:
///     its output is split into [outer loops | tile of T x (vectors x lanes)] with the lanes
///     on the axis that is contiguous in memory (output channels in NHWC, output width in
///     NCHW, columns of matmul), the tile unrolled, the outer loops fused and parallel (the
///     channel-tile loop first when the weights are larger than the data). The
///     accumulation runs in a stage computed at the tile (cache_write, or the anchor itself
///     when an element-wise epilogue — bias, residual add, activation — follows: the epilogue
///     is the stage written to memory). Dense, whose weight is [units, features], vectorizes
///     over the reduction instead (rfactor into up to 4 vectors of partial sums, then 1).
///  3. Other reductions (pooling, softmax, global pooling) are computed inside the loops of the
///     output that reads them when it reads them element by element or row by row, else at
///     the root.
///  4. Every stage left at the root: outer loops fused (until 64 iterations) and parallel, the
///     innermost axis vectorized when every read is contiguous or invariant along it (split by
///     a power of two of at most 64 lanes; a remainder becomes a scalar tail loop).
/// NCHW convolutions vectorize along the output width, which leaves narrow vectors on small
/// images (7, 14, 28 columns): for speed a CPU network should run its convolutions in NHWC.
/// Tile sizes follow the extents so that awkward shapes (7x7 images, 1000 classes, 3 channels)
/// keep their main loops vector code. Anything a rule cannot handle falls back to a simpler
/// schedule (ultimately the naive one), never to a wrong one.
#pragma once
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedule/Steps.h"
#include "target/HostCpu.h"
#include "target/Target.h"
#include "te/ComputeDAG.h"

namespace tessel::ops {

/// The anchor's register tile chosen from outside — a tuning template's config — instead of by
/// the rules. Fields a template leaves at their defaults behave as the rules would.
struct AnchorTile {
  int64_t lanes = 0;          ///< vector lanes along the vector axis (dense: along the reduction); 0: the machine's
  int64_t vectors = 1;        ///< vectors per tile along the vector axis (dense: accumulators)
  int64_t rows = 1;           ///< tile rows along the row axis (ignored by dense)
  int64_t reduceInner = 1;    ///< inner factor of the input-channel reduction `rc` (1: no split)
  std::vector<int> reduceOrder;  ///< permutation of the reduction loops outside the tile (empty: as defined)
  bool unrollKernelWidth = false;  ///< unroll the kernel-width reduction (rx, dj)
  int weightsOuter = -1;      ///< vector-tile loop outermost: -1 by the rule, 0 no, 1 yes
  /// The anchor's padding computed inside its loops (1) rather than as a padded copy at the
  /// root (0); -1 by the rule (inlined for depthwise convolutions).
  int inlinePadding = -1;
  bool operator==(const AnchorTile&) const = default;
};

struct CpuScheduleOptions {
  /// The machine the schedule is made for: its vector width sets the lanes, its register file
  /// bounds the register tile, its caches the blocking, its cores the parallel partition.
  target::CpuMachine machine = target::hostCpu();
  /// Below this many output elements a stage is not parallelized (the thread start-up would
  /// cost more than the work).
  int64_t minParallelElements = 4096;
  /// Outer loops are fused into the parallel loop until it has this many iterations (the
  /// chunks the threads share): `chosenParallelChunks` when set, else ruleParallelChunks().
  int64_t parallelChunks() const { return chosenParallelChunks > 0 ? chosenParallelChunks : ruleParallelChunks(); }
  /// The rule: at least four chunks per core, so that a core that finishes its share early takes
  /// over part of another's (dynamic chunks), and at least 64, below which the split of a
  /// 2–16-core machine's work measured uneven (one chunk more or less on one core).
  int64_t ruleParallelChunks() const { return std::max<int64_t>(64, 4 * int64_t(machine.cores)); }
  /// Set by tuning templates (their `parallel_chunks` knob): the parallel loop's target number of
  /// iterations instead of the rule's; 0: the rule's.
  int64_t chosenParallelChunks = 0;
  /// When a rule fails, fall back to a simpler schedule (true) or raise the Error (tests).
  bool allowFallback = true;
  /// Set by tuning templates: the anchor's tile (the rest of the function follows the rules).
  std::optional<AnchorTile> anchorTile;
  /// Build the loop nest at the end, so that a schedule lowering would refuse fails here (where
  /// a fallback is still possible). A tuner's feature extraction, which only needs the state,
  /// turns it off: lowering every config the search visits doubled its cost.
  bool checkLowering = true;
};

/// The options for a CPU target: its machine model (a remote device's cores are its
/// `-num-cores=N`).
CpuScheduleOptions cpuScheduleOptionsFor(const target::Target& target);

/// The default schedule's steps; `finalState`, when given, receives the state they replay to
/// (the schedule is recorded on one, so a caller that needs it saves the replay). When a rule
/// fails and a simpler schedule is used instead, `fallback` (if given) receives which schedule
/// was used and the rule's error; it is cleared when every rule applied.
std::vector<schedule::StepPtr> defaultCpuSchedule(const te::ComputeDAG& dag, const CpuScheduleOptions& options = {},
                                                  schedule::State* finalState = nullptr, std::string* fallback = nullptr);

/// The tile the rules choose for the DAG's anchor (the conv2d / depthwise / dense / matmul with
/// the most FLOPs), or nothing when the DAG has no anchor or the anchor rule does not apply.
/// A template's fallback config is this tile, so an untuned build is never slower.
std::optional<AnchorTile> defaultAnchorTile(const te::ComputeDAG& dag, const CpuScheduleOptions& options = {});

/// The anchor stage's name (the conv2d, depthwise, dense, matmul or Winograd GEMM with the most
/// FLOPs: OpTraits::anchor), if the DAG has one.
std::optional<std::string> findAnchorStage(const te::ComputeDAG& dag);

/// A separable block fused into one function (graph/Fusion.h): the depthwise convolution the
/// anchor reads through its element-wise epilogue, and the epilogue's last stage (`tile`), which
/// the default schedule computes a register tile's rows at a time inside the anchor's loops.
struct FusedDepthwise {
  std::string convolution, tile;
};
std::optional<FusedDepthwise> fusedDepthwiseOf(const te::ComputeDAG& dag);

}  // namespace tessel::ops
