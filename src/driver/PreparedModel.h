/// A network made ready for task extraction and building, as every network-level flow does it
/// (the CLI's tasks, compile and tune, the benches, the bindings): the standard graph passes for
/// the target, the GPU passes (split reductions, layouts in the products), and the variants
/// tuning measures against each other (Winograd or direct convolutions, packed weights or not);
/// then, with tuning records, the variant each layer takes. Options are plain values: the CLI
/// parses its flags into them once.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"
#include "ops/Layout.h"
#include "target/Target.h"
#include "tune/HistoryBest.h"

namespace tessel::driver {

/// Winograd for stride-1 3x3 convolutions: Auto (CPU targets: the default rules; GPU targets:
/// direct unless records say Winograd is faster), Never, or Fixed (every candidate with
/// F(tileSize x tileSize)).
struct WinogradMode {
  enum class Kind { Auto, Never, Fixed };
  Kind kind = Kind::Auto;
  int tileSize = 0;  ///< Fixed: 2, 4 or 6 (ops::kWinogradTileSizes)
};

struct PrepareOptions {
  /// The target every rule reads; GPU targets build without the CPU's packed weights and fused
  /// separable blocks (their layouts and tiles are the CPU kernels') and get the GPU passes.
  target::Target target = target::Target::host();
  bool optimize = true;  ///< false: no graph pass at all
  /// The layout image operators are converted to; nullopt keeps the network's.
  std::optional<ops::Layout> desiredLayout = ops::Layout::NHWC;
  WinogradMode winograd;
  bool packWeights = true;      ///< convolution and product weights packed by output blocks (CPU)
  bool fuseSeparable = true;    ///< separable blocks as one function where it measured faster (CPU)
  bool combineProducts = true;  ///< combine_parallel_products
  bool splitReductions = true;  ///< GPU: split_reductions (graph::gpuReductionSplitChoice)
  bool fuseLayouts = true;      ///< GPU: fuse_layouts_into_products
  bool fuseAttention = false;   ///< GPU: fuse_attention
  graph::PassRunOptions run;    ///< which graphs to print, and where
};

/// The layout image operators take on `target` by default: NHWC for the CPU schedules, NCHW for
/// GPU targets, each the faster there (resnet-50 untuned on an H100: 3.23 ms in NCHW against
/// 7.19 ms in NHWC, 2026-11-24).
ops::Layout defaultDesiredLayout(const target::Target& target);

/// A network after the standard graph passes, in the variants tuning compares.
struct PreparedModel {
  graph::Graph base;    ///< after the standard passes: every convolution direct, weights HWIO (OIHW in NCHW)
  graph::Graph direct;  ///< every convolution direct, weights packed as the options say
  graph::Graph chosen;  ///< with the Winograd choice (for auto: the default rules), then packed
  graph::Graph chosenUnpacked;  ///< `chosen` before packing
  graph::PackChoice pack;       ///< the packing choice (empty: none)
  /// Winograd auto: the Winograd candidates are a choice that records of the variants
  /// overturn, layer by layer (chooseByRecords); tuning measures them all.
  bool variants = false;
  /// The Winograd variants measured against `direct` under auto, packed. CPU targets: `chosen`
  /// (the layers the rules made Winograd), then those layers one tile size larger (F(4x4) for
  /// F(2x2), F(6x6) for F(4x4) where it fits the L2), if any (graph::cpuWinogradVariants);
  /// GPU targets, whose untuned default is direct: every candidate as Winograd
  /// (ops::gpuWinogradTileSize), while `chosen` is `direct`. Without variants: `chosen` alone.
  std::vector<graph::Graph> winograd;
  bool chosenIsDirect = false;  ///< GPU under auto: `chosen` is the direct variant, `winograd` the other
  /// The layout of the convolutions Winograd applies to: NHWC on CPU targets, NCHW on GPU targets.
  ops::Layout winogradLayout = ops::Layout::NHWC;
};

/// `model` (as loaded, parameters in place) through the passes and into its variants.
PreparedModel prepareModel(graph::Graph model, const PrepareOptions& options);

/// The network a build with tuning records compiles: a Winograd candidate layer with a record
/// of any of its variants (the direct convolution's fused function, a Winograd form's) takes
/// the fastest of those (graph::chooseVariantsByCost); one without any, the rules' choice (on
/// GPU targets: direct).
struct RecordsChoice {
  graph::Graph graph;
  /// "Winograd for 6 of 8 stride-1 3x3 convolutions (F(4x4): 2, F(2x2): 4); measured both
  /// ways: 5 faster as Winograd, 2 faster direct; by the rules: 1" (graph::VariantChoiceCounts);
  /// empty without candidates.
  std::string summary;
};
RecordsChoice chooseByRecords(const PreparedModel& prepared, const tune::HistoryBest& best);

/// The first part of that line for a graph built without records; empty without candidates.
std::string winogradSummary(const PreparedModel& prepared, const graph::Graph& built);

}  // namespace tessel::driver
