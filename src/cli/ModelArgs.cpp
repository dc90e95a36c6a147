#include "cli/ModelArgs.h"

#include "graph/Build.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "cli/OptionChecks.h"
#include "graph/GpuTargetLimits.h"
#include "graph/GraphParams.h"
#include "graph/frontends/Onnx.h"
#include "ops/Conv2d.h"
#include "ops/Schedules.h"
#include "ops/Winograd.h"
#include "runtime/Tensor.h"
#include "runtime/TimeEvaluator.h"
#include "graph/TaskExtraction.h"
#include "graph/VariantChoice.h"
#include "graph/passes/PassManager.h"
#include "support/Error.h"

namespace tessel::cli {

graph::ModelOptions ModelArgs::options() const {
  graph::ModelOptions o;
  o.batch = batch;
  o.imageSize = imageSize;
  o.sequence = sequence;
  o.layers = layers;
  o.layout = ops::parseLayout(layout);
  return o;
}

void addModelSourceOptions(CLI::App* c, ModelArgs& a) {
  c->add_option("--model", a.model,
                fmt::format("the network: an ONNX file (path/to/model.onnx) or a zoo network: {}", fmt::join(graph::modelNames(), ", ")))
      ->required();
  c->add_option("--input-shape", a.inputShapes,
                "ONNX models: the shape of an input, NAME:D0,D1,... (repeatable; needed where the model's is symbolic)");
  c->add_option("--layout", a.layout, "zoo networks: NCHW or NHWC")->transform(oneOf({"NCHW", "NHWC"}));
  c->add_option("--batch", a.batch, "zoo networks: batch size")->check(integerIn(1, 65536));
  c->add_option("--image-size", a.imageSize, "zoo networks: input image size (0: the network's own, 224; smaller for quick runs)")
      ->check(integerIn(1, 4096));
  c->add_option("--sequence", a.sequence, "zoo bert-base and gpt2: tokens per input (0: the network's own, 128)")
      ->check(integerIn(1, 1024));
  c->add_option("--layers", a.layers, "zoo transformers: encoder layers (0: the network's own, 12; fewer for quick runs)")
      ->check(integerIn(1, 1024));
}

graph::Graph loadModel(const ModelArgs& a) {
  if (!graph::isOnnxModelPath(a.model)) {
    TESSEL_CHECK(a.inputShapes.empty(), "--input-shape applies to ONNX models; '{}' is a zoo network (use --batch)", a.model);
    return graph::buildModel(a.model, a.options());
  }
  // An ONNX model is NCHW with its own batch: the zoo's options would silently mean nothing.
  TESSEL_CHECK(a.batch == 1, "--batch applies to zoo networks; give an ONNX model's batch with --input-shape NAME:N,...");
  TESSEL_CHECK(a.imageSize == 0, "--image-size applies to zoo networks; give an ONNX model's input with --input-shape NAME:N,C,H,W");
  TESSEL_CHECK(a.sequence == 0, "--sequence applies to zoo networks; give an ONNX model's tokens with --input-shape NAME:N,TOKENS");
  TESSEL_CHECK(a.layers == 0, "--layers applies to zoo networks; an ONNX model has the layers its file has");
  TESSEL_CHECK(a.layout == "NCHW", "--layout applies to zoo networks (ONNX models are NCHW; --desired-layout converts them)");
  graph::OnnxImportOptions options;
  for (const auto& text : a.inputShapes) {
    auto [name, shape] = graph::parseInputShape(text);
    TESSEL_CHECK(options.inputShapes.emplace(name, shape).second, "--input-shape {}: given twice", name);
  }
  return graph::importOnnx(a.model, options);
}

namespace {
/// --winograd's values: auto, never and each tile size there are matrices for.
std::vector<std::string> winogradModes() {
  std::vector<std::string> modes{"auto", "never"};
  for (int m : ops::kWinogradTileSizes) modes.push_back(std::to_string(m));
  return modes;
}
}  // namespace

void addModelOptions(CLI::App* c, ModelArgs& a) {
  addModelSourceOptions(c, a);
  c->add_option("--target", a.target,
                "target string, e.g. \"cpu -mcpu=native\" (this machine), \"cpu -mcpu=haswell\", cuda (NVIDIA GPUs, sm_90), "
                "\"opencl\" or \"opencl -device=mali\", or vta (the accelerator's simulator); `tessel query --device cpu "
                "--target T` shows a CPU target's machine model")
      ->each([&a](const std::string& text) { a.parsedTarget = target::Target::parse(text); });
  c->add_option("--target-host", a.targetHost,
                "--target vta: where the operators VTA does not run go (cpu); a GPU target: the CPU beside the device, e.g. \"cpu "
                "-mtriple=aarch64-linux-gnu\" (GPU modules have no host code: it compiles the reference of --check-correctness)");
  c->add_option("--vta-config", a.vtaConfig, "--target vta: the hardware configuration, a vta_config.json (default: built in)");
  c->add_option("--vta-pack-start", a.vtaPackStart,
                "--target vta: graph packing starts after this operator, NAME or NAME:INDEX");
  c->add_option("--vta-pack-stop", a.vtaPackStop,
                "--target vta: graph packing stops before this operator, NAME or NAME:INDEX");
  c->add_option("--desired-layout", a.desiredLayout,
                "layout the image operators are converted to before building: auto (NHWC for the CPU "
                "schedules, NCHW for GPU targets, each the faster there), NHWC, NCHW, or keep")
      ->transform(oneOf({"auto", "NHWC", "NCHW", "keep"}));
  c->add_option("--winograd", a.winograd,
                "stride-1 3x3 convolutions as Winograd F(m x m, 3 x 3): auto (CPU targets, NHWC: F(4x4) while its "
                "weights fit the L2 cache, else F(2x2) with at least 32 tiles, direct below 16 channels; GPU targets, "
                "NCHW: direct; with tuning records, each layer the fastest form measured), never, 2, 4 or 6 (every one)")
      ->transform(oneOf(winogradModes()));
  c->add_option("--pack-weights", a.packWeights,
                "NHWC convolution and matrix product weights packed by blocks of output channels (columns), so a register "
                "tile reads them as one stream: auto (blocks of 32, or 16; 64 for 1x1 stride-1 convolutions on images "
                "of at most 14 columns and products of at most 14 rows) or never")
      ->transform(oneOf({"auto", "never"}));
  c->add_option("--fuse-separable", a.fuseSeparable,
                "a depthwise convolution and the 1x1 convolution after it as one function, the depthwise output "
                "computed a tile at a time: auto (stride 1, images of 14x14 or more) or never (one function each, "
                "as TVM fuses)")
      ->transform(oneOf({"auto", "never"}));
  c->add_option("--combine-products", a.combineProducts,
                "products of one value by constant weights (a transformer's query, key and value projections) as one "
                "product: auto (combined) or never (one each)")
      ->transform(oneOf({"auto", "never"}));
  c->add_option("--split-reductions", a.splitReductions,
                "GPU targets: products with too few output tiles to fill the device (a transformer's 128 x 768 projections "
                "on an H200) as partial products over slices of the reduction and their sum: auto (where the tiles fill "
                "fewer than half the multiprocessors) or never")
      ->transform(oneOf({"auto", "never"}));
  c->add_option("--fuse-layouts", a.fuseLayouts,
                "GPU targets: transposes, reshapes and slices read only by a matrix product (a transformer's heads split "
                "and merged) computed as the product copies its operand: auto, or never (a copy kernel each)")
      ->transform(oneOf({"auto", "never"}));
  c->add_flag("--no-optimize", a.noOptimize, "skip the graph passes (batch-norm folding, layout conversion, ...)");
  c->add_option("--print-after", a.printAfter, "print the graph after this pass (repeatable; 'all': after every one)");
}

namespace {

/// The fixed tile size of --winograd 2|4|6 as a choice; empty for never and auto (after checking
/// the value).
graph::WinogradChoice fixedWinogradChoice(const std::string& mode) {
  std::vector<std::string> modes = winogradModes();
  TESSEL_CHECK(std::find(modes.begin(), modes.end(), mode) != modes.end(), "--winograd: '{}' is not one of {}", mode,
               fmt::join(modes, ", "));
  if (mode == "auto" || mode == "never") return {};
  return [m = std::stoi(mode)](const graph::Graph&, int) { return m; };
}

}  // namespace

graph::WinogradChoice winogradChoice(const std::string& mode, const target::CpuMachine& machine) {
  if (auto fixed = fixedWinogradChoice(mode); fixed || mode == "never") return fixed;
  return graph::defaultWinogradChoice(size_t(machine.l2Bytes));
}

std::string desiredLayoutFor(const ModelArgs& a) {
  if (a.desiredLayout != "auto") return a.desiredLayout;
  // GPU threads along the image width read neighbouring inputs and share weights: resnet-50
  // untuned on an H100 ran 3.23 ms in NCHW against 7.19 ms in NHWC (2026-11-24).
  return a.parsedTarget.isGpu() ? "NCHW" : "NHWC";
}

PreparedModel prepareModel(const ModelArgs& a) {
  graph::OptimizeOptions options;
  options.desiredLayout = graph::parseDesiredLayout(desiredLayoutFor(a));
  options.simplify = !a.noOptimize;
  options.fuseSeparable = a.fuseSeparable == "auto";
  options.combineProducts = a.combineProducts == "auto";
  graph::PassRunOptions run;
  run.printAfter = {a.printAfter.begin(), a.printAfter.end()};
  run.printTo = &std::cout;
  graph::Graph model = loadModel(a);
  if (!a.params.empty()) {
    graph::loadGraphParams(model, a.params);
    for (const auto& [name, value] : model.params())
      if (auto bad = runtime::countNonFinite(value); bad.any())
        fmt::print(stderr, "warning: {}: parameter '{}' has {}\n", a.params, name, bad.describe());
  }
  PreparedModel prepared;
  prepared.base = graph::optimizeGraph(std::move(model), options, run);
  if (a.parsedTarget.isGpu() && !a.noOptimize && a.splitReductions == "auto")
    prepared.base = graph::applyReductionSplits(
        prepared.base, graph::gpuReductionSplitChoice(graph::gpuLimitsForBuild(a.parsedTarget).multiProcessorCount), run);
  if (a.parsedTarget.isGpu() && !a.noOptimize && a.fuseLayouts == "auto")
    prepared.base = graph::runPasses(prepared.base, {"fuse_layouts_into_products"}, run);
  if (a.noOptimize) {
    prepared.direct = prepared.chosen = prepared.chosenUnpacked = prepared.base;
    prepared.winograd = {prepared.base};
    return prepared;
  }
  if (a.packWeights == "auto") prepared.pack = graph::defaultPackChoice(a.cpuMachine());
  prepared.direct = graph::applyPacking(prepared.base, prepared.pack, run);
  prepared.variants = a.winograd == "auto";
  if (a.parsedTarget.isGpu()) {
    // The NCHW form on GPU targets. Untuned, auto stays direct (as TVM's CUDA builds without
    // records do); tuning measures every candidate both ways and the records choose.
    prepared.winogradLayout = ops::Layout::NCHW;
    graph::WinogradChoice choice = fixedWinogradChoice(a.winograd);
    if (a.winograd == "auto") choice = graph::gpuWinogradChoice();
    graph::Graph winograd = graph::applyWinograd(prepared.base, choice, run, ops::Layout::NCHW);
    prepared.chosenIsDirect = prepared.variants;
    prepared.chosenUnpacked = prepared.chosenIsDirect ? prepared.base : winograd;
    prepared.chosen = graph::applyPacking(prepared.chosenUnpacked, prepared.pack, run);
    prepared.winograd = {graph::applyPacking(winograd, prepared.pack, run)};
    return prepared;
  }
  if (!prepared.variants) {
    prepared.chosenUnpacked = graph::applyWinograd(prepared.base, winogradChoice(a.winograd, a.cpuMachine()), run);
    prepared.chosen = graph::applyPacking(prepared.chosenUnpacked, prepared.pack, run);
    prepared.winograd = {prepared.chosen};
    return prepared;
  }
  std::vector<graph::Graph> unpacked = graph::cpuWinogradVariants(prepared.base, size_t(a.cpuMachine().l2Bytes), run);
  prepared.chosenUnpacked = unpacked[0];
  prepared.chosen = graph::applyPacking(unpacked[0], prepared.pack, run);
  prepared.winograd = {prepared.chosen};
  for (size_t i = 1; i < unpacked.size(); ++i) prepared.winograd.push_back(graph::applyPacking(unpacked[i], prepared.pack));
  return prepared;
}

graph::Graph preparedModel(const ModelArgs& a) { return prepareModel(a).chosen; }

std::string winogradSummary(const PreparedModel& prepared, const graph::Graph& built) {
  int candidates = 0;
  std::map<int, int> byTile;  // tile size -> convolutions
  for (size_t i = 0; i < prepared.base.nodes().size(); ++i)
    candidates += graph::winogradCandidate(prepared.base, int(i), prepared.winogradLayout);
  for (size_t i = 0; i < built.nodes().size(); ++i)
    if (int m = graph::winogradTileSize(built, int(i))) ++byTile[m];
  if (candidates == 0) return "";
  // Largest tile first; F(4x4) and F(2x2), the rule's two, even when none.
  int total = 0;
  std::string counts;
  for (auto m = std::rbegin(ops::kWinogradTileSizes); m != std::rend(ops::kWinogradTileSizes); ++m) {
    int n = byTile[*m];
    total += n;
    if (n > 0 || *m <= 4) counts += fmt::format("{}F({}x{}): {}", counts.empty() ? "" : ", ", *m, *m, n);
  }
  return fmt::format("Winograd for {} of {} stride-1 3x3 convolutions ({})", total, candidates, counts);
}

namespace {

/// The packing of `unpacked` (a variant before packing) that keeps HWIO weights where the
/// unpacked function has a record and the packed one has none: a log tuned before packing
/// existed still applies. `kept` counts those layers.
graph::Graph packByRecords(const PreparedModel& prepared, const graph::Graph& unpacked, const tune::HistoryBest& best, int& kept) {
  if (!prepared.pack) return unpacked;
  auto unpackedKeys = graph::workloadKeysByNode(unpacked);
  auto packedKeys = graph::workloadKeysByNode(graph::applyPacking(unpacked, prepared.pack));
  return graph::applyPacking(unpacked, [&](const graph::Graph& g, int id) {
    int64_t block = prepared.pack(g, id);
    const std::string& name = g.node(id).name;
    auto packed = packedKeys.find(name), hwio = unpackedKeys.find(name);
    bool packedRecord = packed != packedKeys.end() && best.find(packed->second);
    if (block == 0 || packedRecord || hwio == unpackedKeys.end() || !best.find(hwio->second)) return block;
    ++kept;
    return int64_t(0);
  });
}

}  // namespace

RecordsChoice chooseByRecords(const PreparedModel& prepared, const tune::HistoryBest& best) {
  int kept = 0;
  auto withPacking = [&](RecordsChoice r) {
    if (kept > 0)
      r.summary += fmt::format("{}HWIO weights kept for {} layer{} whose records were tuned without packing",
                               r.summary.empty() ? "" : "; ", kept, kept == 1 ? "" : "s");
    return r;
  };
  if (!prepared.variants) {
    graph::Graph g = packByRecords(prepared, prepared.chosenUnpacked, best, kept);
    return withPacking({g, winogradSummary(prepared, g)});
  }
  // A layer takes its fastest measured variant; a record of one variant is enough.
  graph::VariantChoice byCost = graph::chooseVariantsByCost(
      prepared.direct, prepared.winograd, prepared.chosen, [&best](const std::string& key) -> std::optional<double> {
        const tune::TuningRecord* record = best.find(key);
        return record ? std::optional<double>(record->cost()) : std::nullopt;
      });
  RecordsChoice result;
  result.graph = packByRecords(prepared, graph::applyWinograd(prepared.base, byCost.choice, {}, prepared.winogradLayout), best, kept);
  result.summary = winogradSummary(prepared, result.graph);
  if (!result.summary.empty()) result.summary += "; " + byCost.counts.describe();
  return withPacking(result);
}

std::function<std::vector<schedule::StepPtr>(const te::ComputeDAG&)> DefaultSchedules::provider() {
  return [notes = notes_, options = options_](const te::ComputeDAG& dag) {
    std::string fallback;
    auto steps = ops::defaultCpuSchedule(dag, options, nullptr, &fallback);
    ++notes->kernels;
    if (!fallback.empty())
      notes->fallbacks.push_back(fmt::format("{} ({})", dag.outputNames().empty() ? "?" : dag.outputNames()[0], fallback));
    return steps;
  };
}

std::string DefaultSchedules::summary() const {
  if (notes_->fallbacks.empty())
    return fmt::format("default schedules: the rules applied to all {} kernels scheduled by them", notes_->kernels);
  return fmt::format("default schedules: {} of {} kernels fell back to a simpler schedule: {}", notes_->fallbacks.size(),
                     notes_->kernels, fmt::join(notes_->fallbacks, "; "));
}

bool isVtaTarget(const std::string& target) { return target == "vta" || target.rfind("vta ", 0) == 0; }

void checkCpuTarget(const std::string& target) {
  TESSEL_CHECK(target.rfind("cpu", 0) == 0 || target.rfind("llvm", 0) == 0,
               "target '{}' is unknown: networks build for \"cpu ...\" (or \"llvm ...\"), cuda, \"opencl ...\" and vta", target);
}

}  // namespace tessel::cli
