/// The `conv2d_packed.vta` tuning template: TVM's seven knobs over a packed convolution group
/// (tvm@v0.18.0:vta/python/vta/top/vta_conv2d.py), in TVM's order and index mapping, a config's
/// schedule as a step list of the schedule language (so a record reads as a schedule and
/// replays), and the tiling `emitConv2d` generates code for, read back from those steps.
///
///   tile_b      split of the batch blocks; defined but never applied, as in TVM (it only
///               multiplies the space, and is 1 for batch 1)
///   tile_h      [outer, rows] of the output rows: rows per tile (Conv2dTiling::rows)
///   tile_w      [outer, columns] of the output columns (Conv2dTiling::columns)
///   tile_ci     [outer, blocks] of the input-channel blocks loaded per GEMM (inputBlocks)
///   tile_co     [outer, blocks] of the output-channel blocks per tile (outputBlocks)
///   oc_nthread  1 or 2 virtual threads over the output-channel tiles
///   h_nthread   1 or 2 virtual threads over the row tiles
///
/// Virtual threads: TVM gives each of the oc_nthread·h_nthread threads its own input, weight
/// and accumulator buffers and interleaves their instructions, so one thread's loads overlap
/// another's GEMMs. The emitter gets the same from buffer sets that consecutive tiles rotate
/// through: loadBufferSets = accumulatorSets = oc_nthread·h_nthread (an int32 result keeps one
/// accumulator set: its byte planes are shifted in place). Which axis the next tile comes from
/// is the fixed loop order's business, so oc 2·h 1 and oc 1·h 2 make the same program.
///
/// Splits are written [outer, inner] (TVM writes [-1, inner]); configs are numbered in mixed
/// radix, tile_b the fastest digit. A config whose tiling does not fit the buffers, or that
/// the DMA cannot pad, does not instantiate: the error names the reason (an error record).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "schedule/Steps.h"
#include "tune/autotvm/TuningTask.h"
#include "vta/Conv2dLowering.h"

namespace tessel::vta {

inline constexpr const char* kConv2dPackedTemplate = "conv2d_packed.vta";

/// What code generation needs of a packed convolution group, apart from its values.
struct Conv2dPackedProblem {
  Conv2dWorkload workload;
  PackedConvolution group;  ///< node ids refer to the graph it came from; the rest is shape
  HardwareConfig config;
  te::ComputeDAG dag;       ///< the group's computation (the task's DAG)
};

/// The config space of a workload, knobs in TVM's order.
tune::autotvm::ConfigSpace conv2dPackedSpace(const Conv2dWorkload& workload);

/// A config's tiling (without checking it).
Conv2dTiling conv2dPackedTiling(const tune::autotvm::ConfigEntity& config, const PackedConvolution& group);

/// The schedule of a tiling as steps on the group's DAG: the output tiled (rows, columns,
/// channel blocks; virtual threads split off and annotated), the epilogue and the convolution
/// computed at the tile with the ALU and accumulator marked, the convolution's input-channel
/// tiles with the input and weight loads (cache_read into the VTA buffer scopes, DMA pragmas)
/// at their outer loop, the GEMM intrinsic on the batch lanes.
std::vector<schedule::StepPtr> conv2dPackedSteps(const te::ComputeDAG& dag, const Conv2dTiling& tiling);

/// The tiling a step list describes (what emitConv2d generates from a record): the split
/// factors of the output's rows, columns and channel blocks and of the convolution's input
/// blocks, the virtual threads' parts. Error when the steps do not replay on the DAG or do not
/// describe a tiling.
Conv2dTiling conv2dTilingOfSteps(const Conv2dPackedProblem& problem, const std::vector<schedule::StepPtr>& steps);

/// TVM's FLOP count of the convolution: 2 · output elements · KH · KW · input channels.
double conv2dPackedFlops(const Conv2dWorkload& workload, const HardwareConfig& config);

/// The problem of a fused group that starts with conv2d_blocked (Error naming its node if the
/// ALU cannot run the epilogue).
Conv2dPackedProblem conv2dPackedProblem(const graph::Graph& graph, const graph::FusedGroup& group, const HardwareConfig& config);

/// The computation a task of a convolution shape measures, as seed 000 registers the template:
/// the packed convolution (input "data", the weight a constant of seeded int8 values), then a
/// right shift by 8, a clip into [0, 127] and a cast to int8. Groups of one shape share the
/// task and its records whatever their own epilogue, as in TVM, whose task is the convolution.
graph::Graph conv2dPackedTaskGraph(const Conv2dWorkload& workload, const HardwareConfig& config, uint64_t seed = 0);

/// conv2dPackedProblem of that graph's one group.
Conv2dPackedProblem conv2dPackedTaskProblem(const Conv2dWorkload& workload, const HardwareConfig& config);

/// "conv2d_packed_56x56_64_64_3x3_s1": a task's name, readable and a C identifier.
std::string conv2dPackedTaskName(const Conv2dWorkload& workload, const HardwareConfig& config);

/// The seeds' line of a task: (batch, height, width, in_filter, out_filter, hkernel, wkernel,
/// hpad, wpad, hstride, wstride).
std::string conv2dPackedShapeLine(const Conv2dWorkload& workload, const HardwareConfig& config);

/// The tuning task of a problem for target "vta": its space, its instantiation (config →
/// steps, refusing configs that do not fit with the reason), the fallback config (the
/// rule-based defaultConv2dTiling, the schedule without records) and TVM's FLOP count.
tune::autotvm::TuningTaskPtr makeConv2dPackedTask(const std::string& name, const Conv2dPackedProblem& problem);

}  // namespace tessel::vta
