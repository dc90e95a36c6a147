/// The options every command on a zoo network shares (tasks, compile, tune): which network,
/// its layout and batch, the target, and the graph passes it goes through before tasks are
/// extracted or functions built, so that every command sees the very same functions.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/ModelZoo.h"
#include "graph/passes/GraphPasses.h"

namespace tessel::cli {

struct ModelArgs {
  std::string model, layout = "NCHW", target = "cpu";
  int64_t batch = 1;
  bool noOptimize = false;
  std::string desiredLayout = "NHWC";
  /// Winograd for stride-1 3x3 convolutions: "auto" (the default rules:
  /// ops::defaultWinogradTileSize), "never", "2" or "4" (every candidate, F(m x m)).
  std::string winograd = "auto";
  std::vector<std::string> printAfter;
  /// A params file whose weights replace the zoo's random ones before the passes (compile
  /// --params); empty: the random weights.
  std::string params;
  graph::ModelOptions options() const;
};

void addModelOptions(CLI::App* command, ModelArgs& args);

/// The Winograd choice of a --winograd value; Error naming a value that is none of them.
graph::WinogradChoice winogradChoice(const std::string& mode);

/// The zoo network after the standard graph passes: what gets extracted, tuned and built.
graph::Graph preparedModel(const ModelArgs& args);

/// Error unless the target is a CPU (the only one whole networks build for yet).
void checkCpuTarget(const std::string& target);

}  // namespace tessel::cli
