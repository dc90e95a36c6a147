/// A network compiled into a module directory for a CPU target, as `tessel compile` does it
/// (seeds 000-003's relay.build after apply_history_best): the records read first (the user's log
/// with the shipped records of the target's class filling the rest), the network prepared, each
/// layer's variant chosen by the records, every function scheduled by its best record or the
/// default rules, the module written whole (ModuleOutput.h). What the build used comes back as
/// lines for the caller to print: the CLI prints them, the Python package keeps them on its Module.
#pragma once
#include <string>
#include <vector>

#include "driver/PreparedModel.h"
#include "graph/Build.h"
#include "graph/Graph.h"

namespace tessel::driver {

struct BuildNetworkOptions {
  graph::Graph model;       ///< as loaded (a zoo network or an ONNX model, its parameters in place)
  PrepareOptions prepare;   ///< `prepare.target` must be a CPU target
  std::string records;      ///< a records log applied with apply-history-best (empty: none)
  bool shippedRecords = true;  ///< the records tessel ships for the target's class fill what `records` leaves
  bool naive = false;          ///< no schedule at all (debugging); excludes records
  bool fuse = true;            ///< operator fusion; false: one function per operator
  /// The module directory (checkModuleOutput: new, empty or a module, which is replaced).
  std::string output;
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
};

/// Checks the options (Error naming `tessel compile`'s flag, before any work) and builds.
BuildNetworkResult buildNetwork(const BuildNetworkOptions& options);

}  // namespace tessel::driver
