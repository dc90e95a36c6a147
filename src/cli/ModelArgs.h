/// The options every command on a network shares (tasks, compile, tune): which network (a zoo
/// name or an ONNX file), its layout and batch or its input shapes, the target, and the graph
/// passes it goes through before tasks are extracted or functions built, so that every command
/// sees the very same functions.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/ModelZoo.h"
#include "graph/passes/GraphPasses.h"
#include "ops/Schedules.h"
#include "target/HostCpu.h"
#include "target/Target.h"
#include "tune/HistoryBest.h"

namespace tessel::cli {

struct ModelArgs {
  std::string model, layout = "NCHW", target = "cpu";
  int64_t batch = 1;
  int64_t imageSize = 0;  ///< zoo networks: the input image's size (0: the network's own, 224)
  int64_t sequence = 0;   ///< zoo bert-base and gpt2: tokens per input (0: the network's own, 128)
  int64_t layers = 0;     ///< zoo transformers: encoder layers (0: the network's own, 12)
  bool noOptimize = false;
  std::string desiredLayout = "auto";  ///< auto: desiredLayoutFor
  /// Winograd for stride-1 3x3 convolutions: "auto" (CPU targets: the default rules,
  /// ops::defaultWinogradTileSize; GPU targets: direct unless records say Winograd is faster),
  /// "never", "2", "4" or "6" (every candidate, F(m x m)).
  std::string winograd = "auto";
  /// Convolution weights packed by output-channel blocks: "auto" (ops::defaultPackBlock) or "never".
  std::string packWeights = "auto";
  /// Separable blocks (depthwise then pointwise convolution) as one function: "auto" (where it
  /// measured faster: graph::separableBlock) or "never" (TVM's fusion).
  std::string fuseSeparable = "auto";
  /// Products of one value by constant weights as one product (combine_parallel_products):
  /// "auto" (combined) or "never".
  std::string combineProducts = "auto";
  /// GPU targets: products with too few output tiles for the device's multiprocessors as
  /// partial products and their sum (split_reductions): "auto" (graph::gpuReductionSplitChoice)
  /// or "never".
  std::string splitReductions = "auto";
  /// GPU targets: fuse_layouts_into_products (auto) or not (never).
  std::string fuseLayouts = "auto";
  std::vector<std::string> printAfter;
  /// A params file whose weights replace the zoo's random ones before the passes (compile
  /// --params); empty: the random weights.
  std::string params;
  /// --input-shape NAME:D0,D1,... of an ONNX model (repeatable).
  std::vector<std::string> inputShapes;
  /// --target vta: the host target of the operators that stay on the CPU; a GPU target: the
  /// CPU beside the device (cli/GpuTargets.h says what it is used for); and for --target vta that stay on the CPU, the hardware
  /// configuration (a vta_config.json; empty: the built-in default) and graph packing's region.
  std::string targetHost = "cpu", vtaConfig, vtaPackStart = "max_pool2d", vtaPackStop = "global_avg_pool2d";
  /// --target parsed (when the option is read): what every rule of the build reads.
  target::Target parsedTarget = target::Target::host();
  graph::ModelOptions options() const;
  /// The CPU the graph's CPU rules are for: a CPU target's machine, else this machine's (the
  /// host of a GPU or VTA target keeps its operators here).
  const target::CpuMachine& cpuMachine() const { return parsedTarget.isCpu() ? parsedTarget.cpu : target::hostCpu(); }
};

void addModelOptions(CLI::App* command, ModelArgs& args);

/// --model, --input-shape (ONNX models) and --layout, --batch (zoo networks) on a command.
void addModelSourceOptions(CLI::App* command, ModelArgs& args);
/// The network as built by the zoo or imported from an ONNX file, before any pass.
graph::Graph loadModel(const ModelArgs& args);

/// The Winograd choice of a --winograd value for a CPU target on `machine`; Error naming a value
/// that is none of them.
graph::WinogradChoice winogradChoice(const std::string& mode, const target::CpuMachine& machine);

/// A network after the standard graph passes, in the variants tuning compares.
struct PreparedModel {
  graph::Graph base;    ///< after the standard passes: every convolution direct, weights HWIO (OIHW in NCHW)
  graph::Graph direct;  ///< every convolution direct, weights packed as --pack-weights says
  graph::Graph chosen;  ///< with the --winograd choice (for auto: the default rules), then packed
  graph::Graph chosenUnpacked;  ///< `chosen` before packing
  graph::PackChoice pack;  ///< the --pack-weights choice (empty: none)
  /// --winograd auto: the Winograd candidates are a choice that records of the variants
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
PreparedModel prepareModel(const ModelArgs& args);
/// The layout --desired-layout asks for: itself, or for auto NHWC on CPU targets and NCHW on
/// GPU targets.
std::string desiredLayoutFor(const ModelArgs& args);

/// The network after the standard graph passes: what gets extracted, tuned and built
/// without records (prepareModel(args).chosen).
graph::Graph preparedModel(const ModelArgs& args);

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

/// The default CPU schedule for a build, noting every function whose rules failed and which
/// simpler schedule it got instead (a failing rule is reported, never silent).
class DefaultSchedules {
 public:
  /// Schedules for `target`'s machine (ops::cpuScheduleOptionsFor).
  explicit DefaultSchedules(const target::Target& target = target::Target::host()) : options_(ops::cpuScheduleOptionsFor(target)) {}
  /// The provider for graph::BuildOptions::schedule (or a records provider's fallback); it
  /// shares state with this object.
  std::function<std::vector<schedule::StepPtr>(const te::ComputeDAG&)> provider();
  /// "default schedules: every kernel got the rules' schedule", or "default schedules: 2 of 21
  /// kernels fell back: T_x (naive loops (...)), ...".
  std::string summary() const;

 private:
  struct Notes {
    int kernels = 0;
    std::vector<std::string> fallbacks;
  };
  ops::CpuScheduleOptions options_;
  std::shared_ptr<Notes> notes_ = std::make_shared<Notes>();
};

/// Whether the target string names the VTA accelerator ("vta ...").
bool isVtaTarget(const std::string& target);

/// Error unless the target is a CPU. Callers have handled the GPU and VTA targets before; the
/// message names every kind of target a network builds for.
void checkCpuTarget(const std::string& target);

}  // namespace tessel::cli
