#include "cli/ModelArgs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli/OptionChecks.h"
#include "graph/GraphParams.h"
#include "graph/frontends/Onnx.h"
#include "runtime/Tensor.h"
#include "graph/passes/PassManager.h"
#include "support/Error.h"

namespace tessel::cli {

graph::ModelOptions ModelArgs::options() const {
  graph::ModelOptions o;
  o.batch = batch;
  o.layout = ops::parseLayout(layout);
  return o;
}

void addModelSourceOptions(CLI::App* c, ModelArgs& a) {
  c->add_option("--model", a.model,
                fmt::format("the network: an ONNX file (path/to/model.onnx) or a zoo network: {}", fmt::join(graph::modelNames(), ", ")))
      ->required();
  c->add_option("--input-shape", a.inputShapes,
                "ONNX models: the shape of an input, NAME:D0,D1,... (repeatable; needed where the model's is symbolic)");
  c->add_option("--layout", a.layout, "zoo networks: NCHW or NHWC");
  c->add_option("--batch", a.batch, "zoo networks: batch size")->check(integerIn(1, 65536));
}

graph::Graph loadModel(const ModelArgs& a) {
  if (!graph::isOnnxModelPath(a.model)) {
    TESSEL_CHECK(a.inputShapes.empty(), "--input-shape applies to ONNX models; '{}' is a zoo network (use --batch)", a.model);
    return graph::buildModel(a.model, a.options());
  }
  // An ONNX model is NCHW with its own batch: the zoo's options would silently mean nothing.
  TESSEL_CHECK(a.batch == 1, "--batch applies to zoo networks; give an ONNX model's batch with --input-shape NAME:N,...");
  TESSEL_CHECK(a.layout == "NCHW", "--layout applies to zoo networks (ONNX models are NCHW; --desired-layout converts them)");
  graph::OnnxImportOptions options;
  for (const auto& text : a.inputShapes) {
    auto [name, shape] = graph::parseInputShape(text);
    TESSEL_CHECK(options.inputShapes.emplace(name, shape).second, "--input-shape {}: given twice", name);
  }
  return graph::importOnnx(a.model, options);
}

void addModelOptions(CLI::App* c, ModelArgs& a) {
  addModelSourceOptions(c, a);
  c->add_option("--target", a.target, "target string, e.g. \"cpu -mcpu=native\"");
  c->add_option("--desired-layout", a.desiredLayout,
                "layout the image operators are converted to before building: NHWC (default: the CPU "
                "schedules' fastest), NCHW, or keep");
  c->add_flag("--no-optimize", a.noOptimize, "skip the graph passes (batch-norm folding, layout conversion, ...)");
  c->add_option("--print-after", a.printAfter, "print the graph after this pass (repeatable; 'all': after every one)");
}

graph::Graph preparedModel(const ModelArgs& a) {
  graph::OptimizeOptions options;
  options.desiredLayout = graph::parseDesiredLayout(a.desiredLayout);
  options.simplify = !a.noOptimize;
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
  return graph::optimizeGraph(std::move(model), options, run);
}

void checkCpuTarget(const std::string& target) {
  TESSEL_CHECK(target.rfind("cpu", 0) == 0 || target.rfind("llvm", 0) == 0, "target '{}': only CPU targets can build networks yet",
               target);
}

}  // namespace tessel::cli
