#include "cli/VtaFlow.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>

#include "driver/ModuleOutput.h"
#include "graph/Build.h"
#include "graph/GraphParams.h"
#include "runtime/GraphExecutor.h"
#include "runtime/MachineLoad.h"
#include "support/TempDir.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/JsonParse.h"
#include "tune/RecordLog.h"
#include "tune/autotvm/ResumedTrials.h"
#include "tune/autotvm/TuneTask.h"
#include "vta/GraphPacking.h"
#include "vta/VtaMeasurement.h"
#include "vta/ShippedRecords.h"
#include "vta/ModuleBuilder.h"
#include "vta/VtaDeviceApi.h"
#include "vta/VtaProfile.h"

namespace tessel::cli {

namespace {

/// The network with --params' weights when given.
graph::Graph loadModelWithParams(const ModelArgs& model) {
  graph::Graph g = loadModel(model);
  if (!model.params.empty()) graph::loadGraphParams(g, model.params);
  return g;
}

}  // namespace

VtaNetwork prepareVtaNetwork(const ModelArgs& model) {
  TESSEL_CHECK(model.targetHost.rfind("cpu", 0) == 0 || model.targetHost.rfind("llvm", 0) == 0,
               "--target-host '{}': the operators VTA does not run go to a CPU target", model.targetHost);
  VtaNetwork network;
  if (!model.vtaConfig.empty()) network.config = vta::HardwareConfig::fromFile(model.vtaConfig);
  network.packed = vta::prepareForVta(loadModelWithParams(model), network.config, model.vtaPackStart, model.vtaPackStop);
  network.tasks = vta::extractConv2dPackedTasks(network.packed, network.config);
  return network;
}

namespace {

/// The first input of the packed network filled with seeded values in [-2, 2).
runtime::Tensor sampleImage(const graph::Graph& graph, uint32_t seed) {
  const graph::TensorType& type = graph.node(graph.inputIds().at(0)).type;
  auto image = runtime::Tensor::empty(type.shape, type.dtype);
  TESSEL_CHECK(type.dtype == DataType::float32(), "the network's input '{}' is {}, not float32",
               graph.node(graph.inputIds()[0]).name, type.dtype.str());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < image.numel(); ++i) image.dataAs<float>()[i] = dist(rng);
  return image;
}

}  // namespace

void tuneVta(const ModelArgs& model, const VtaTuneOptions& o) {
  TESSEL_CHECK(!o.log.empty(), "--log is required: every trial is written there");
  tune::autotvm::checkTunerName(o.tuner);
  checkWritableFilePath(o.log, "--log");
  tune::LocalRunnerOptions measure;
  measure.number = o.number;
  measure.repeat = o.repeat;
  measure.timeoutSeconds = o.timeout;
  measure.workerPath = vta::findVtaWorker();  // a local run measures on this machine's simulator
  auto runner = makeRunner(o.runner, measure);

  fmt::print("Extract tasks...\n");
  VtaNetwork network = prepareVtaNetwork(model);
  // --ops: the seeds tune conv2d only (dense stays on the CPU); "dense" adds the dense layers'
  // dense_packed tasks, numbered after the convolutions'.
  bool convolutions = o.ops.empty(), dense = false;
  for (const std::string& op : o.ops) {
    TESSEL_CHECK(op == "conv2d" || op == "dense", "--ops '{}': --target vta tunes conv2d and dense", op);
    (op == "dense" ? dense : convolutions) = true;
  }
  std::vector<vta::VtaDenseTask> denseTasks;
  if (dense) denseTasks = vta::extractDensePackedTasks(network.packed, network.config);
  vta::VtaBuilder builder;
  std::vector<tune::autotvm::TuningTaskPtr> listed;
  if (convolutions) fmt::print("{}", vta::formatConv2dPackedTasks(network.tasks));
  if (dense) fmt::print("{}", vta::formatDensePackedTasks(denseTasks));
  for (const vta::VtaConv2dTask& t : network.tasks) {
    builder.addProblem(t.task->measure->workloadKey, t.problem);
    if (convolutions) listed.push_back(t.task);
  }
  for (const vta::VtaDenseTask& t : denseTasks) {
    builder.addProblem(t.task->measure->workloadKey, t.problem);
    listed.push_back(t.task);
  }
  // --tasks selects by the listed numbers, which the progress lines keep.
  std::vector<tune::autotvm::TuningTaskPtr> chosen = listed;
  std::vector<size_t> numbers;
  for (size_t n = 1; n <= listed.size(); ++n) numbers.push_back(n);
  if (!o.onlyTasks.empty()) {
    chosen.clear();
    numbers.clear();
    for (size_t n : o.onlyTasks) {
      TESSEL_CHECK(n >= 1 && n <= listed.size(), "--tasks: there is no task {} (the network has {})", n, listed.size());
      chosen.push_back(listed[n - 1]);
      numbers.push_back(n);
    }
  }
  std::vector<tune::TuningRecord> earlier;
  if (o.resume && std::filesystem::exists(o.log)) earlier = tune::readRecords(o.log).records;

  tune::RecordLogWriter log(o.log);
  fmt::print("Tuning...\n");
  std::fflush(stdout);
  int64_t trials = 0, errors = 0, duplicates = 0;
  tune::autotvm::ResumedTrials total;
  std::vector<std::vector<tune::autotvm::Trial>> resumedOfTask = tune::autotvm::resumedTrialsOfTasks(chosen, earlier, total);
  if (total.leftOutCount() > 0) fmt::print("{}\n", total.leftOutLine());
  for (size_t i = 0; i < chosen.size(); ++i) {
    const tune::autotvm::TuningTaskPtr& task = chosen[i];
    const std::vector<tune::autotvm::Trial>& resumed = resumedOfTask[i];
    auto tuner = tune::autotvm::makeTuner(o.tuner, task, o.seed + i);
    tune::autotvm::TuneTaskOptions t;
    t.nTrial = o.nTrial;
    t.earlyStopping = o.earlyStopping;
    t.batchSize = o.batchSize;
    t.confirmTop = 0;  // modelled time is exact: nothing to confirm by measuring again
    t.progressPrefix = fmt::format("[Task {:>2}/{:>2}] ", numbers[i], listed.size());
    t.liveProgress = isatty(fileno(stdout));
    auto result = tune::autotvm::tuneTask(
        task, *tuner, builder, *runner, t, resumed,
        [&](const tune::autotvm::ConfigEntity& config, const tune::MeasureInput& input, const tune::MeasureResult& r) {
          tune::RecordConfig rc{int64_t(config.index()), config.toJson()["entity"]};
          log.append(tune::makeRecord(input, r, task->templateName, nlohmann::json{{"task", task->name}}, rc));
        });
    trials += result.trials;
    errors += result.errors;
    duplicates += result.duplicates;
  }
  fmt::print("Tuned {} tasks: {} trials ({} refused or failed{}); log: {}\n", chosen.size(), trials, errors,
             duplicates > 0 ? "; " + tune::autotvm::duplicatesLine(duplicates) : "", o.log);
  if (o.noEvaluate) return;
  fmt::print("Compile...\n");
  std::fflush(stdout);
  TempDir scratch("tessel-vta-module");
  compileVta(model, scratch.path() + "/module", o.log);
  fmt::print("Upload...\n");
  VtaModule module = loadVtaModule(scratch.path() + "/module");
  fmt::print("Evaluate inference time cost...\n");
  std::fflush(stdout);
  runVtaModule(module, sampleImage(network.packed, 0), false);
}

namespace {

/// The module's description (network, configuration, packing region): what `tessel run` reads to
/// set up the simulator before loading the programs.
constexpr const char* kModuleFile = "vta_module.json";

}  // namespace

void compileVta(const ModelArgs& model, const std::string& output, const std::string& records, bool shipped) {
  driver::checkModuleOutput(output);
  std::vector<tune::TuningRecord> chosen;
  VtaNetwork network = prepareVtaNetwork(model);  // checks every option before anything is written
  std::vector<tune::TuningRecord> given;
  if (!records.empty()) given = tune::readRecords(records).records;
  int added = 0;
  if (shipped) given = vta::withShippedRecords(std::move(given), network.tasks, network.config, &added);
  tune::HistoryBest best(given, target::Target::parse("vta"));
  for (const vta::VtaConv2dTask& t : network.tasks)
    if (const tune::TuningRecord* r = best.find(t.task->measure->workloadKey)) chosen.push_back(*r);
  nlohmann::json module = {{"format", "tessel-vta-module"},
                           {"version", 2},
                           {"model", model.model},
                           {"batch", model.batch},
                           {"layout", model.layout},
                           {"target_host", model.targetHost},
                           {"vta_pack_start", model.vtaPackStart},
                           {"vta_pack_stop", model.vtaPackStop},
                           {"config", network.config.toJson()}};
  // The host side is the packed network compiled for the CPU (the packed convolutions as naive
  // loops: the CPU int8 reference), the VTA programs beside it.
  graph::BuildOptions build;
  build.target = target::Target::parse(model.targetHost);
  DefaultSchedules defaults;
  build.schedule = defaults.provider();
  std::vector<std::string> notes;
  vta::TilingChoice tilings = vta::tilingsFromRecords(best, network.tasks, network.config, &notes);
  std::string lines;
  for (const tune::TuningRecord& r : chosen) lines += tune::recordToLine(r) + "\n";
  graph::BuildReport report;
  driver::writeModule(output, [&](const std::string& directory) {
    report = vta::buildVtaModule(network.packed, network.config, tilings, directory, build, &notes);
    writeFile(directory + "/" + kModuleFile, module.dump(2) + "\n", SyncToDisk::kNo);
    writeFile(directory + "/records.log", lines, SyncToDisk::kNo);
  });
  size_t groups = 0;
  for (const auto& t : network.tasks) groups += t.groups.size();
  fmt::print("compiled {} for VTA ({}) into {}: {} packed convolution groups in {} tasks, {} with a tuned record ({} from {}, {} "
             "shipped with tessel), their VTA programs in {}; {} host functions for {} ({} distinct kernels in all, compiled in "
             "{:.1f} s)\n",
             model.model, network.config.modelName(), output, groups, network.tasks.size(), chosen.size(), chosen.size() - size_t(added),
             records.empty() ? "no log" : records, added, vta::kModuleProgramsFile, size_t(report.functions) - groups, model.targetHost,
             report.distinctKernels, report.compileSeconds);
}

bool isVtaModule(const std::string& directory) { return std::filesystem::exists(directory + "/" + kModuleFile); }

std::vector<int64_t> VtaModule::inputShape() const { return loaded.executor.inputShape(0); }

VtaModule loadVtaModule(const std::string& directory) {
  const std::string path = directory + "/" + kModuleFile;
  vta::HardwareConfig config;
  try {
    nlohmann::json module = parseJson(readFile(path, file_kinds::kJson), "");  // the catch below names the path
    TESSEL_CHECK(module.value("format", "") == "tessel-vta-module", "not a tessel-vta-module");
    TESSEL_CHECK(module.value("version", 0) == 2,
                 "version {} (this tessel reads version 2, whose VTA programs are stored in the module: compile it again)",
                 module.value("version", 0));
    config = vta::HardwareConfig::fromJson(module.at("config"));
  } catch (const std::exception& e) {
    fail("{}: {}", path, e.what());
  }
  TESSEL_CHECK(std::filesystem::exists(directory + "/" + vta::kModuleProgramsFile), "{}: the module has no {}", directory,
               vta::kModuleProgramsFile);
  // The simulator of the module's configuration is this process's vta device.
  vta::registerVtaSimulatorDevice(config);
  return VtaModule{vta::loadVtaModuleExecutor(directory), directory};
}

std::vector<runtime::Tensor> runVtaModule(VtaModule& module, const runtime::Tensor& image, bool profile) {
  runtime::GraphExecutor& executor = module.loaded.executor;
  const vta::ModuleRunner& runner = *module.loaded.runner;
  vta::Simulator& simulator = module.loaded.runner->simulator();
  simulator.clearStats();
  // Kernel threads from the cores other programs leave free, as `tessel benchmark` times.
  runtime::useFreeCores();
  executor.setInput(0, image);
  executor.run();
  std::vector<runtime::Tensor> outputs;
  for (int i = 0; i < executor.numOutputs(); ++i) outputs.push_back(executor.getOutput(i));
  const vta::Statistics stats = simulator.stats();
  std::vector<vta::VtaGroupRun> runs = vta::moduleGroupRuns(runner.programs(), runner.lastRuns());
  std::vector<bool> onVta(executor.numCalls(), false);
  int fromRecords = 0;
  for (const vta::CallProgram& c : runner.programs().calls) {
    onVta[c.call] = true;
    fromRecords += c.description.value("tiling_note", "").find(": record") != std::string::npos;
  }

  // Time: the host functions measured here (median of a few runs each), the VTA programs modelled.
  double hostSeconds = 0;
  std::vector<runtime::GraphExecutor::CallProfile> calls = executor.profile(3);
  for (size_t c = 0; c < calls.size(); ++c)
    if (!onVta[c]) hostSeconds += calls[c].seconds;
  uint64_t cycles = 0;
  for (const vta::VtaGroupRun& r : runs) cycles += r.cycles;
  const vta::TimingParameters& timing = simulator.options().timing;

  fmt::print("{} packed convolution groups on VTA (the module's programs): {} with a tuned tiling, {} with the default; {} host "
             "functions on the CPU\n",
             runs.size(), fromRecords, runs.size() - size_t(fromRecords), executor.numCalls() - runs.size());
  if (profile) fmt::print("\n{}", vta::formatVtaProfile(runs, timing));
  fmt::print("\nExecution statistics:\n{}", stats.format());
  fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", (hostSeconds + timing.seconds(cycles)) * 1e3, 0.0);
  fmt::print("(VTA {:.2f} ms modelled: {} cycles at {} MHz; host functions {:.2f} ms measured on this CPU)\n",
             timing.seconds(cycles) * 1e3, cycles, timing.clockMegahertz, hostSeconds * 1e3);
  return outputs;
}

std::vector<runtime::Tensor> runVtaModule(const std::string& directory, const runtime::Tensor* image, uint32_t seed, bool profile) {
  VtaModule module = loadVtaModule(directory);
  runtime::Tensor input;
  if (image) {
    input = *image;
  } else {
    input = runtime::Tensor::empty(module.inputShape(), DataType::float32());
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (int64_t i = 0; i < input.numel(); ++i) input.dataAs<float>()[i] = uniform(rng);
  }
  return runVtaModule(module, input, profile);
}

}  // namespace tessel::cli
