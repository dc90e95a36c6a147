/// The `dense_packed.vta` tuning template: TVM's four knobs over a packed dense group
/// (tvm@v0.18.0:vta/python/vta/top/vta_dense.py, schedule_dense_packed), in TVM's order and
/// index mapping, a config's schedule as a step list of the schedule language, and the tiling
/// `emitDense` generates code for, read back from those steps.
///
///   tile_b      [outer, blocks] of the batch blocks per tile (DenseTiling::batchBlocks); TVM
///               applies it to the output (unlike conv2d_packed's tile_b)
///   tile_ci     [outer, blocks] of the input-channel blocks loaded per GEMM (inputBlocks)
///   tile_co     [outer, blocks] of the output-channel blocks per tile (outputBlocks)
///   oc_nthread  1 or 2 virtual threads over the output-channel tiles: as conv2d_packed's, the
///               emitter rotates consecutive tiles through that many load and accumulator sets
///               (one accumulator set for an int32 result)
///
/// Configs are numbered in mixed radix, tile_b the fastest digit, as TVM's ConfigSpace numbers
/// them. A config whose tiling does not fit the buffers does not instantiate: the error names the
/// buffer (an error record).
#pragma once
#include <string>
#include <vector>

#include "schedule/Steps.h"
#include "tune/autotvm/TuningTask.h"
#include "vta/DenseLowering.h"

namespace tessel::vta {

inline constexpr const char* kDensePackedTemplate = "dense_packed.vta";

/// What code generation needs of a packed dense group, apart from its values.
struct DensePackedProblem {
  DenseWorkload workload;
  PackedConvolution group;  ///< `convolution` is the dense_blocked node; ids refer to the graph it came from
  HardwareConfig config;
  te::ComputeDAG dag;       ///< the group's computation (the task's DAG)
};

/// The config space of a workload, knobs in TVM's order: tile_b, tile_ci, tile_co, oc_nthread.
tune::autotvm::ConfigSpace densePackedSpace(const DenseWorkload& workload);

/// A config's tiling (without checking it).
DenseTiling densePackedTiling(const tune::autotvm::ConfigEntity& config, const PackedConvolution& group);

/// The schedule of a tiling as steps on the group's DAG: the output tiled (batch and channel
/// blocks, TVM's (bo.0, co.0, bo.1, co.1, bi, ci), virtual threads split off co.0 and
/// annotated), the store pragma at co.1, the epilogue and the dense computed at the tile (ALU,
/// accumulator), the dense's input-channel tiles outermost with the input and weight loads
/// (cache_read into the VTA buffer scopes, DMA pragmas) at their outer loop, the GEMM on bi.
std::vector<schedule::StepPtr> densePackedSteps(const te::ComputeDAG& dag, const DenseTiling& tiling);

/// The tiling a step list describes (what emitDense generates from a record). Error when the
/// steps do not replay on the DAG or do not split the three tiled axes.
DenseTiling denseTilingOfSteps(const DensePackedProblem& problem, const std::vector<schedule::StepPtr>& steps);

/// TVM's FLOP count: 2 · output elements · input channels.
double densePackedFlops(const DenseWorkload& workload, const HardwareConfig& config);

/// The problem of a fused group that starts with dense_blocked (Error naming the node the ALU
/// cannot compute).
DensePackedProblem densePackedProblem(const graph::Graph& graph, const graph::FusedGroup& group, const HardwareConfig& config);

/// The computation a task of a dense shape measures, as TVM's VTA dense test computes it: the
/// packed dense (input "data", the weight a constant of seeded int8 values), a right shift by 8,
/// a clip into [0, 127] and a cast to int8.
graph::Graph densePackedTaskGraph(const DenseWorkload& workload, const HardwareConfig& config, uint64_t seed = 0);

/// densePackedProblem of that graph's one group.
DensePackedProblem densePackedTaskProblem(const DenseWorkload& workload, const HardwareConfig& config);

/// "dense_packed_1_512_1008": batch, input and output channels.
std::string densePackedTaskName(const DenseWorkload& workload, const HardwareConfig& config);

/// "(batch, in_dim, out_dim)", TVM's dense workload.
std::string densePackedShapeLine(const DenseWorkload& workload, const HardwareConfig& config);

/// The tuning task of a problem for target "vta": its space, its instantiation (refusing
/// configs that do not fit, with the reason), the fallback config (defaultDenseTiling) and
/// TVM's FLOP count.
tune::autotvm::TuningTaskPtr makeDensePackedTask(const std::string& name, const DensePackedProblem& problem);

}  // namespace tessel::vta
