#include "cli/ModelArgs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>

#include "cli/OptionChecks.h"
#include "graph/GraphParams.h"
#include "graph/frontends/Onnx.h"
#include "ops/Schedules.h"
#include "ops/Winograd.h"
#include "runtime/Tensor.h"
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
  c->add_option("--fuse-attention", a.fuseAttention,
                "GPU targets: a transformer's attention scores, scale, mask and softmax computed in its context product's "
                "function (a block's rows of scores in shared memory): auto, or never (a kernel each)")
      ->transform(oneOf({"auto", "never"}));
  c->add_flag("--no-optimize", a.noOptimize, "skip the graph passes (batch-norm folding, layout conversion, ...)");
  c->add_option("--print-after", a.printAfter, "print the graph after this pass (repeatable; 'all': after every one)");
}

namespace {
/// --winograd's value as the driver's mode; Error naming a value that is none of them.
driver::WinogradMode winogradMode(const std::string& text) {
  std::vector<std::string> modes = winogradModes();
  TESSEL_CHECK(std::find(modes.begin(), modes.end(), text) != modes.end(), "--winograd: '{}' is not one of {}", text,
               fmt::join(modes, ", "));
  if (text == "auto") return {};
  if (text == "never") return {driver::WinogradMode::Kind::Never, 0};
  return {driver::WinogradMode::Kind::Fixed, std::stoi(text)};
}
}  // namespace

driver::PrepareOptions prepareOptions(const ModelArgs& a) {
  driver::PrepareOptions o;
  o.target = a.parsedTarget;
  o.optimize = !a.noOptimize;
  o.desiredLayout = a.desiredLayout == "auto" ? driver::defaultDesiredLayout(a.parsedTarget) : graph::parseDesiredLayout(a.desiredLayout);
  o.winograd = winogradMode(a.winograd);
  o.packWeights = a.packWeights == "auto";
  o.fuseSeparable = a.fuseSeparable == "auto";
  o.combineProducts = a.combineProducts == "auto";
  o.splitReductions = a.splitReductions == "auto";
  o.fuseLayouts = a.fuseLayouts == "auto";
  o.fuseAttention = a.fuseAttention == "auto";
  o.run.printAfter = {a.printAfter.begin(), a.printAfter.end()};
  o.run.printTo = &std::cout;
  return o;
}

graph::Graph loadNetwork(const ModelArgs& a) {
  graph::Graph model = loadModel(a);
  if (!a.params.empty()) {
    graph::loadGraphParams(model, a.params);
    for (const auto& [name, value] : model.params())
      if (auto bad = runtime::countNonFinite(value); bad.any())
        fmt::print(stderr, "warning: {}: parameter '{}' has {}\n", a.params, name, bad.describe());
  }
  return model;
}

PreparedModel prepareModel(const ModelArgs& a) {
  driver::PrepareOptions options = prepareOptions(a);  // a bad option fails before the model loads
  return driver::prepareModel(loadNetwork(a), options);
}

graph::Graph preparedModel(const ModelArgs& a) { return prepareModel(a).chosen; }

bool isVtaTarget(const std::string& target) { return target == "vta" || target.rfind("vta ", 0) == 0; }

void checkCpuTarget(const std::string& target) {
  TESSEL_CHECK(target.rfind("cpu", 0) == 0 || target.rfind("llvm", 0) == 0,
               "target '{}' is unknown: networks build for \"cpu ...\" (or \"llvm ...\"), cuda, \"opencl ...\" and vta", target);
}

}  // namespace tessel::cli
