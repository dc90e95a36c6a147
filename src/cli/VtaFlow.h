/// The network commands with `--target vta` (seeds 000, 002 and 004): a zoo network quantized
/// and packed for the accelerator, its conv2d_packed tasks extracted and tuned (candidates run
/// as VTA programs on the simulator, here or on device servers started with `--device vta`),
/// and the network run with each packed convolution group on the simulator with the best
/// records' tilings.
///
/// Running the network: the packed convolution groups are VTA programs on the simulator; the
/// host's operators (the first convolution, pooling, the dense layer, the packing itself) run
/// in the reference interpreter (vta::runWithVta), not yet as compiled CPU functions. The time
/// printed is the accelerator's modelled time (cycles / clock), which is deterministic.
#pragma once
#include <string>
#include <vector>

#include "cli/ModelArgs.h"
#include "cli/RpcCommands.h"
#include "vta/VtaTasks.h"

namespace tessel::cli {

/// A network prepared for VTA: the configuration, the packed graph and its tasks.
struct VtaNetwork {
  vta::HardwareConfig config;
  graph::Graph packed;
  std::vector<vta::VtaConv2dTask> tasks;
};
/// Error unless --target-host is a CPU; reads --vta-config.
VtaNetwork prepareVtaNetwork(const ModelArgs& model);

struct VtaTuneOptions {
  std::string tuner = "random", log;
  int64_t nTrial = 1000, earlyStopping = 0;
  size_t batchSize = 8;
  uint64_t seed = 0;
  int number = 1, repeat = 1;
  double timeout = 60;
  std::vector<size_t> onlyTasks;  ///< 1-based (empty: all)
  bool resume = false, noEvaluate = false;
  RunnerArgs runner;
};

/// `tessel tune --target vta`: prints "Extract tasks...", the seeds' task list, "Tuning..." and
/// a progress line per task, logs every trial, then runs the network with the best records
/// ("Compile...", "Upload...", "Evaluate inference time cost...", "Mean inference time (std
/// dev)") unless noEvaluate.
void tuneVta(const ModelArgs& model, const VtaTuneOptions& options);

/// Runs the prepared network once on the simulator with the tilings of `recordsLog`'s best
/// records (empty: none), and where they have none and `shipped`, tessel's shipped records
/// (vta/ShippedRecords.h), else the default tilings, on `image` (NCHW float32), printing the records' use,
/// the simulator's statistics as seed 004 prints them and the modelled time; returns the
/// network's outputs. `profile` adds a line per packed group (see printVtaProfile).
std::vector<runtime::Tensor> runVtaNetwork(const VtaNetwork& network, const std::string& recordsLog, bool shipped,
                                           const runtime::Tensor& image, bool profile = false);

/// `tessel compile --target vta -o DIR [--records LOG]`: a VTA module directory —
/// vta_module.json (the network, batch, layout, hardware configuration and packing region),
/// params.bin (the network's weights) and records.log (the best record of each task, when
/// records are given; with `shipped`, tessel's shipped records for the tasks they do not
/// cover, else the default tilings there). `tessel run DIR` prepares the network from it again and runs it on the
/// simulator; the tilings are chosen from records.log then, as at compile time. A compiled
/// host side (the CPU operators as compiled functions) is not built yet.
void compileVta(const ModelArgs& model, const std::string& output, const std::string& records, bool shipped = true);

/// Whether DIR is a VTA module directory (has vta_module.json).
bool isVtaModule(const std::string& directory);

/// A VTA module directory read back: the network prepared again with its weights and
/// configuration, and its records.log (which holds the shipped records it was compiled with).
struct VtaModule {
  VtaNetwork network;
  std::string records;
  std::vector<int64_t> inputShape() const;
};
/// Error naming vta_module.json when it is not one.
VtaModule loadVtaModule(const std::string& directory);

/// `tessel run DIR` of a VTA module: the network on `image` (NCHW float32; null: seeded random
/// values in [0, 1)), printed as runVtaNetwork prints it; returns the outputs.
std::vector<runtime::Tensor> runVtaModule(const std::string& directory, const runtime::Tensor* image, uint32_t seed, bool profile);

}  // namespace tessel::cli
