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

#include "driver/DefaultSchedules.h"
#include "driver/PreparedModel.h"
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
  std::string fuseAttention = "never";
  std::vector<std::string> printAfter;
  /// A params file whose weights replace the zoo's random ones before the passes (compile
  /// --params); empty: the random weights.
  std::string params;
  /// --input-shape NAME:D0,D1,... of an ONNX model (repeatable).
  std::vector<std::string> inputShapes;
  /// --target vta: the host target of the operators that stay on the CPU; a GPU target: the
  /// CPU beside the device (driver/GpuTargetHost.h says what it is used for); and for --target vta that stay on the CPU, the hardware
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

/// The preparation a command's flags ask for (driver::prepareModel's options): each flag parsed
/// here, once. Error naming a --winograd value that is none of its modes.
driver::PrepareOptions prepareOptions(const ModelArgs& args);

using driver::chooseByRecords;
using driver::PreparedModel;
using driver::RecordsChoice;
using driver::winogradSummary;

/// The network loaded with --params' weights (a warning for each parameter that is not finite).
graph::Graph loadNetwork(const ModelArgs& args);

/// The network loaded (with --params' weights) and prepared as the flags say.
PreparedModel prepareModel(const ModelArgs& args);

/// The network after the standard graph passes: what gets extracted, tuned and built
/// without records (prepareModel(args).chosen).
graph::Graph preparedModel(const ModelArgs& args);

/// The default CPU schedule for a build, noting the functions whose rules failed.
using driver::DefaultSchedules;

/// Whether the target string names the VTA accelerator ("vta ...").
bool isVtaTarget(const std::string& target);

/// Error unless the target is a CPU. Callers have handled the GPU and VTA targets before; the
/// message names every kind of target a network builds for.
void checkCpuTarget(const std::string& target);

}  // namespace tessel::cli
