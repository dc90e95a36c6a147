/// The network commands with `--target vta` (seeds 000, 002 and 004): a zoo network quantized
/// and packed for the accelerator, its conv2d_packed tasks extracted and tuned (candidates run
/// as VTA programs on the simulator, here or on device servers started with `--device vta`),
/// and the network run with each packed convolution group on the simulator with the best
/// records' tilings.
///
/// Running the network: the host's functions (the first convolution, pooling, the dense layer,
/// the packing itself) compiled for the CPU, the packed convolution groups VTA programs on the
/// simulator in their calls' place. The time printed is the host functions' measured time plus
/// the accelerator's modelled time (cycles / clock).
#pragma once
#include <string>
#include <vector>

#include "cli/ModelArgs.h"
#include "cli/RpcCommands.h"
#include "vta/ModuleRunner.h"
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
  /// Operators to tune: conv2d (the default, the seeds') and dense (resnet-18's classifier as a
  /// dense_packed task; the network build keeps it on the CPU).
  std::vector<std::string> ops;
  bool resume = false, noEvaluate = false;
  RunnerArgs runner;
};

/// `tessel tune --target vta`: prints "Extract tasks...", the seeds' task list, "Tuning..." and
/// a progress line per task, logs every trial, then runs the network with the best records
/// ("Compile...", "Upload...", "Evaluate inference time cost...", "Mean inference time (std
/// dev)") unless noEvaluate.
void tuneVta(const ModelArgs& model, const VtaTuneOptions& options);

/// `tessel compile --target vta -o DIR [--records LOG]`: a VTA module directory that the runtime
/// with the VTA device support runs alone (vta/ModuleBuilder.h) — the packed network compiled for
/// --target-host (kernels.so, graph.json, params.bin; the packed convolutions as naive loops),
/// vta_programs.json (each packed convolution group's VTA program, with the fastest tiling
/// under its own epilogue of its task's best records and the default: vta::tilingsFromRecords),
/// vta_module.json (the network, batch, layout, hardware
/// configuration and packing region) and records.log (the best record of each task; with
/// `shipped`, tessel's shipped records for the tasks the log does not cover).
void compileVta(const ModelArgs& model, const std::string& output, const std::string& records, bool shipped = true);

/// Whether DIR is a VTA module directory (has vta_module.json).
bool isVtaModule(const std::string& directory);

/// A VTA module directory loaded: its executor with the stored VTA programs in their calls'
/// place, on a simulator of the module's configuration (registered as this process's vta
/// device). Neither the model nor a compiler is needed.
struct VtaModule {
  vta::VtaModuleExecutor loaded;
  std::string directory;
  std::vector<int64_t> inputShape() const;
};
/// Error naming vta_module.json when it is not one (or one of an older version, whose programs
/// were not stored), and the file and call of a bad program.
VtaModule loadVtaModule(const std::string& directory);

/// Runs a VTA module once on `image` (NCHW float32): its host functions on the CPU, the packed
/// convolution groups' programs on the simulator. Prints how many groups have a tuned tiling,
/// `profile`'s per-group table (vta/VtaProfile.h), the simulator's statistics as seed 004 prints
/// them and `Mean inference time`: the host functions' measured time plus the programs' modelled
/// time. Returns the network's outputs.
std::vector<runtime::Tensor> runVtaModule(VtaModule& module, const runtime::Tensor& image, bool profile = false);
/// `tessel run DIR`: the module on `image` (null: seeded random values in [0, 1)).
std::vector<runtime::Tensor> runVtaModule(const std::string& directory, const runtime::Tensor* image, uint32_t seed, bool profile);

}  // namespace tessel::cli
