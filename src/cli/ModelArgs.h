/// The options every command on a network shares (tasks, compile, tune): which network (a zoo
/// name or an ONNX file), its layout and batch or its input shapes, the target, and the graph
/// passes it goes through before tasks are extracted or functions built, so that every command
/// sees the very same functions.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/ModelZoo.h"

namespace tessel::cli {

struct ModelArgs {
  std::string model, layout = "NCHW", target = "cpu";
  int64_t batch = 1;
  bool noOptimize = false;
  std::string desiredLayout = "NHWC";
  std::vector<std::string> printAfter;
  /// A params file whose weights replace the zoo's random ones before the passes (compile
  /// --params); empty: the random weights.
  std::string params;
  /// --input-shape NAME:D0,D1,... of an ONNX model (repeatable).
  std::vector<std::string> inputShapes;
  graph::ModelOptions options() const;
};

void addModelOptions(CLI::App* command, ModelArgs& args);

/// --model, --input-shape (ONNX models) and --layout, --batch (zoo networks) on a command.
void addModelSourceOptions(CLI::App* command, ModelArgs& args);
/// The network as built by the zoo or imported from an ONNX file, before any pass.
graph::Graph loadModel(const ModelArgs& args);

/// The network after the standard graph passes: what gets extracted, tuned and built.
graph::Graph preparedModel(const ModelArgs& args);

/// Error unless the target is a CPU (the only one whole networks build for yet).
void checkCpuTarget(const std::string& target);

}  // namespace tessel::cli
