/// A network compiled into a module directory for a CPU or GPU target (cuda, opencl), as `tessel
/// compile` does it (seeds 000-003's relay.build after apply_history_best): the records read first
/// (the user's log with the shipped records of the target's class filling the rest), the network
/// prepared, each layer's variant chosen by the records, every function scheduled by its best
/// record or the default rules (GPU targets: the default GPU schedule, BuildGpuNetwork.h), the
/// module written whole (ModuleOutput.h). What the build used comes back as
/// lines for the caller to print: the CLI prints them, the Python package keeps them on its Module.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/PreparedModel.h"
#include "graph/Build.h"
#include "graph/Graph.h"

namespace tessel::driver {

struct BuildNetworkOptions {
  graph::Graph model;       ///< as loaded (a zoo network or an ONNX model, its parameters in place)
  PrepareOptions prepare;   ///< `prepare.target`: a CPU or GPU target
  std::string records;      ///< a records log applied with apply-history-best (empty: none)
  bool shippedRecords = true;  ///< the records tessel ships for the target's class fill what `records` leaves
  bool naive = false;          ///< no schedule at all (debugging, CPU targets); excludes records
  bool fuse = true;            ///< operator fusion; false: one function per operator
  /// The module directory (checkModuleOutput: new, empty or a module, which is replaced).
  std::string output;
  /// GPU targets: the CPU beside the device (`--target-host`, GpuTargetHost.h); "llvm ..." is read as "cpu ...".
  std::string targetHost = "cpu";
  /// GPU targets: the default GPU schedule's rules, spelt as `tessel compile` takes them: output
  /// channels each thread computes in a direct convolution ("auto", "1", "2", "4") and parts a
  /// reduction with few outputs is split into ("auto", "1", "2", "4", "8", "16"). Given, they
  /// exclude records and leave the shipped records out (those choose their own tiles).
  std::string channelTile = "auto", reductionParts = "auto";
};

/// What a GPU build adds to `tessel compile`'s summary line.
struct GpuBuildSummary {
  std::string host;       ///< the host target as checked ("cpu" unless targetHost says otherwise)
  std::string schedules;  ///< where the kernels' schedules came from
  std::string limits;     ///< the profile of the limits the kernels were verified against
};

struct BuildNetworkResult {
  graph::BuildReport report;
  /// What the build applied, in the order `tessel compile` prints them: the user's log's
  /// summary ("LOG: ..."), the shipped records' line, notes of records measured on other
  /// machines, the Winograd choice, the default schedules' summary; each present only when it
  /// says something.
  std::vector<std::string> lines;
  /// Shipped records that did not replay on their function, one line each (warnings).
  std::vector<std::string> warnings;
  std::optional<GpuBuildSummary> gpu;  ///< GPU targets only
  /// Appends `text` to `lines` unless it is empty (a line with nothing to say).
  void addLine(std::string text) {
    if (!text.empty()) lines.push_back(std::move(text));
  }
};

/// Error unless the GPU schedule's rules are "auto" or `target` is a GPU target (naming the flag).
void checkGpuRulesApply(const target::Target& target, const std::string& channelTile, const std::string& reductionParts);

/// Checks the options without any work (Error naming `tessel compile`'s flag): for a caller that
/// would otherwise load the model first. `model` is not read.
void checkBuildNetworkOptions(const BuildNetworkOptions& options);

/// Checks the options (checkBuildNetworkOptions) and builds.
BuildNetworkResult buildNetwork(const BuildNetworkOptions& options);

}  // namespace tessel::driver
