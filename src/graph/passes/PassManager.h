/// The pass manager: graph passes known by name, run in sequence, with the graph printed after
/// any of them (`tessel compile --print-after fold_scale_axis`). `optimizeGraph` is the
/// standard pipeline every whole-network build, task extraction and tuning run goes through,
/// so that the tasks a tuner sees are exactly the functions the build compiles.
#pragma once
#include <functional>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/passes/GraphPasses.h"
#include "ops/Layout.h"

namespace tessel::graph {

struct GraphPass {
  std::string name;
  std::string description;
  std::function<Graph(const Graph&)> run;
};

/// simplify_inference, fold_constants, fold_scale_axis, patch_products, collapse_layout_chains,
/// combine_parallel_products, convert_layout_nhwc,
/// convert_layout_nchw, use_winograd (every candidate convolution to F(4x4, 3x3)),
/// use_packed_weights (every candidate packed by the default block), quantize (int8 with the
/// default options), graph_pack (VTA blocks with the default options), eliminate_dead_code.
const std::vector<GraphPass>& graphPasses();
/// Error listing the known passes if there is none of that name.
const GraphPass& lookupGraphPass(const std::string& name);

struct PassRunOptions {
  std::set<std::string> printAfter;  ///< pass names; "all" prints after every pass
  std::ostream* printTo = nullptr;   ///< where to print (required if printAfter is not empty)
};

/// Runs the passes in order. A pass that fails names itself in the error.
Graph runPasses(const Graph& graph, const std::vector<std::string>& passes, const PassRunOptions& options = {});

struct OptimizeOptions {
  /// Convert the image operators to this layout; unset: keep the graph's layouts.
  std::optional<ops::Layout> desiredLayout = ops::Layout::NHWC;
  bool simplify = true;  ///< false: no passes at all (the graph as built, for debugging)
  /// Separable blocks (a depthwise then a pointwise convolution) in one function where that
  /// measured faster (fuse_separable_blocks); false: TVM's fusion, one function per convolution.
  bool fuseSeparable = true;
  /// Products of one value by constant weights of one reduction (a transformer's query, key and
  /// value projections) as one wide product (combine_parallel_products); false: one each.
  bool combineProducts = true;
  /// Which convolutions run as Winograd (use_winograd with this choice, then the filter
  /// transforms folded, after the standard passes); empty: every convolution stays direct.
  WinogradChoice winograd;
  /// Which of the remaining convolutions get packed weights (use_packed_weights after
  /// Winograd, then folded); empty: none.
  PackChoice pack;
};

/// The standard pipeline's pass names for these options.
std::vector<std::string> standardPipeline(const OptimizeOptions& options = {});

/// "NHWC", "NCHW" or "keep" (no conversion); Error naming the text otherwise.
std::optional<ops::Layout> parseDesiredLayout(const std::string& text);

/// runPasses(graph, standardPipeline(options), run), then applyWinograd with options.winograd.
Graph optimizeGraph(const Graph& graph, const OptimizeOptions& options = {}, const PassRunOptions& run = {});

/// use_winograd with `choice` on a graph the standard passes made (its convolutions in `layout`:
/// NHWC for CPU builds, NCHW for GPU builds), then the transformed weights folded; the graph
/// itself when the choice is empty.
Graph applyWinograd(const Graph& optimized, const WinogradChoice& choice, const PassRunOptions& run = {},
                    ops::Layout layout = ops::Layout::NHWC);

/// The Winograd forms of a CPU (NHWC) network that tuning measures against its direct
/// convolutions, before packing: the default rules' first (defaultWinogradChoice; `run` prints
/// it), then each of their Winograd layers one tile size larger (largeWinogradChoice: F(4x4) for
/// F(2x2), F(6x6) for F(4x4) where it fits the L2) unless no layer gets one.
std::vector<Graph> cpuWinogradVariants(const Graph& optimized, size_t l2Bytes, const PassRunOptions& run = {});

/// use_packed_weights with `choice`, then the packed weights folded; the graph itself when the
/// choice is empty.
Graph applyPacking(const Graph& optimized, const PackChoice& choice, const PassRunOptions& run = {});

/// split_reductions with `choice` (splitProductReductions), then the split weights folded; the
/// graph itself when the choice is empty.
Graph applyReductionSplits(const Graph& optimized, const SplitChoice& choice, const PassRunOptions& run = {});

}  // namespace tessel::graph
