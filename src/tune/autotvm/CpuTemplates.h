/// The CPU tuning templates. Each schedules the anchor of a fused function (the conv2d,
/// depthwise conv2d or dense that dominates its FLOPs) with a register tile whose shape comes
/// from the config — AutoTVM's spatial-pack knobs — while the rest of the function (padding,
/// epilogue, other stages) follows the default schedule's rules:
///
///   tile_v   split of the vector axis into [outer, vectors, lanes] (output channels in NHWC,
///            output width in NCHW; dense: the reduction, [outer, accumulators, lanes])
///   tile_r   split of the row axis into [outer, rows] (output width in NHWC, height in NCHW)
///   tile_ic  split of the input-channel reduction into [outer, inner]
///   reorder_reduce  the order of the reduction loops outside the tile
///   unroll_kw       unroll the kernel-width loop
///   weights_outer   the vector-tile loop outside the image loops (weights stay in cache)
///   inline_pad      the padding computed inside the convolution's loops instead of as a
///                   padded copy (only where the function pads its input)
///   parallel_chunks the parallel loop's target number of iterations, which sets how many outer
///                   loops are fused into it: the rule's count (ops::CpuScheduleOptions), one
///                   per core, 16 per core (not where the rules fix the parallel loop: a fused
///                   depthwise tile; an NHWC weights-outer tile keeps its one chunk of rows per core)
///
/// Every space contains the default schedule's own tile, which is the fallback config: an
/// untuned task builds exactly as without tuning.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "target/Target.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::tune::autotvm {

/// conv2d_nhwc.x86, conv2d_nchw.x86, group_conv2d_nhwc.x86, group_conv2d_nchw.x86,
/// depthwise_conv2d_nhwc.x86, depthwise_conv2d_nchw.x86, dense.x86, matmul.x86, and
/// conv2d_nhwc_winograd.x86 (the register tile of Winograd's batched GEMM: vectors along the
/// output channels, rows along the tiles).
std::vector<std::string> cpuTemplateNames();

/// The template that tunes a DAG for `target` (by its anchor's kind), if one applies: a dense
/// whose rules find no register tile to start from (a product of a few elements, ONNX's small
/// Gemm tests) has none and keeps the default schedule, untuned.
std::optional<std::string> cpuTemplateFor(const te::ComputeDAG& dag, const target::Target& target);

/// A tuning task for the DAG with the named template (or the one cpuTemplateFor picks), its space
/// shaped for the target's machine (lanes of its vector width, tiles that fit its registers).
/// Error naming the template and the DAG's anchor when the template does not fit.
TuningTaskPtr makeCpuTuningTask(const std::string& name, const te::ComputeDAG& dag,
                                const target::Target& target = target::Target::host(), const std::string& templateName = "");

}  // namespace tessel::tune::autotvm
