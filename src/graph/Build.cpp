#include "graph/Build.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <map>
#include <sstream>

#include "codegen/CSource.h"
#include "codegen/GpuBuild.h"
#include "codegen/Toolchain.h"
#include "graph/MemoryPlan.h"
#include "ops/GpuSchedules.h"
#include "passes/Lower.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Params.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"

namespace tessel::graph {

namespace {

/// The bytes of a node's value in the plan; an Error naming the node when the runtime would
/// refuse to allocate it (runtime::planTensorBytes).
size_t plannedBytesOf(const Graph& graph, int node) {
  const Node& n = graph.node(node);
  std::string where = n.kind == NodeKind::Input ? fmt::format("input '{}'", n.name) : fmt::format("node '{}' ({})", n.name, n.op);
  return size_t(runtime::planTensorBytes(where, n.type.dtype, n.type.shape));
}

/// A C identifier from a node name.
std::string identifier(const std::string& name) {
  std::string id;
  for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return id;
}

}  // namespace


BuildReport buildGraph(const Graph& graph, const std::string& directory, const BuildOptions& options) {
  TESSEL_CHECK(!graph.outputs().empty(), "building a graph without outputs");
  std::filesystem::create_directories(directory);
  auto groups = fuseOperators(graph, options.fuse);
  // The values that cross a function boundary are planned: one the runtime would refuse to
  // allocate is refused here, before any kernel is built.
  for (int input : graph.inputIds()) plannedBytesOf(graph, input);
  for (const FusedGroup& g : groups) plannedBytesOf(graph, g.output);

  // One kernel per distinct workload; the calls name it.
  bool gpu = options.target.isGpu();
  passes::GpuLimits limits = gpu ? (options.gpuLimits ? *options.gpuLimits : passes::GpuLimits::forTarget(options.target))
                                 : passes::GpuLimits{};
  ScheduleProvider schedule = options.schedule;
  if (gpu && !schedule) {
    ops::GpuScheduleOptions rules = ops::gpuScheduleOptionsFor(limits, options.target.matmulPrecision);
    schedule = [rules](const te::ComputeDAG& dag) { return ops::defaultGpuSchedule(dag, rules); };
  }
  std::vector<schedule::LoopNestFunction> functions;
  std::vector<passes::GpuLoweredFunction> gpuKernels;
  std::map<std::string, std::string> kernelOfKey;
  std::vector<std::string> kernelOfGroup;
  for (const FusedGroup& g : groups) {
    te::ComputeDAG dag = buildGroupDAG(graph, g);
    std::string key = dag.workloadKey();
    auto it = kernelOfKey.find(key);
    if (it == kernelOfKey.end()) {
      std::string name = fmt::format("fused_{}_{}", identifier(graph.node(g.output).op), kernelOfKey.size());
      try {
        std::vector<schedule::StepPtr> steps = schedule ? schedule(dag) : std::vector<schedule::StepPtr>{};
        if (gpu) gpuKernels.push_back(passes::lowerForGpu(schedule::replay(dag, steps), name, limits));
        else functions.push_back(passes::lower(schedule::replay(dag, steps), name));
      } catch (const Error& e) {
        throw e.withContext(fmt::format("scheduling the function of node '{}'", graph.node(g.output).name));
      }
      it = kernelOfKey.emplace(key, name).first;
    }
    kernelOfGroup.push_back(it->second);
  }
  auto start = std::chrono::steady_clock::now();
  if (gpu) {
    codegen::saveGpuModule(codegen::buildGpuKernels(gpuKernels, options.target), directory);
  } else {
    codegen::compileSharedLibrary(codegen::generateCSource(functions), directory + "/kernels.so",
                                  codegen::compileOptionsForTarget(options.target));
  }
  double compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Tensors of the plan: every node whose value crosses a function boundary.
  std::map<int, int> tensorOfNode;
  nlohmann::json tensors = nlohmann::json::array();
  std::vector<PlannedTensor> planned;
  std::vector<int> plannedTensorIds;      // planned[i] is tensor plannedTensorIds[i]
  std::map<int, size_t> plannedIndexOf;   // the reverse
  runtime::NamedTensors params;
  std::vector<bool> isOutput = graph.outputFlags();
  auto tensorFor = [&](int node) {
    auto found = tensorOfNode.find(node);
    if (found != tensorOfNode.end()) return found->second;
    const Node& n = graph.node(node);
    int id = int(tensors.size());
    nlohmann::json t = {{"name", n.name}, {"dtype", n.type.dtype.str()}, {"shape", n.type.shape}};
    if (n.kind == NodeKind::Constant) {
      t["param"] = n.name;
      params[n.name] = graph.constant(node);
    } else {
      bool external = n.kind == NodeKind::Input || isOutput[size_t(node)];
      planned.push_back({plannedBytesOf(graph, node), n.kind == NodeKind::Input ? -1 : 0, external ? INT_MAX : 0});
      plannedIndexOf[id] = plannedTensorIds.size();
      plannedTensorIds.push_back(id);
    }
    tensors.push_back(t);
    tensorOfNode[node] = id;
    return id;
  };
  nlohmann::json inputs = nlohmann::json::array(), calls = nlohmann::json::array();
  for (int in : graph.inputIds()) inputs.push_back(tensorFor(in));
  auto plannedOf = [&](int tensor) -> PlannedTensor* {
    auto it = plannedIndexOf.find(tensor);
    return it == plannedIndexOf.end() ? nullptr : &planned[it->second];
  };
  for (size_t c = 0; c < groups.size(); ++c) {
    nlohmann::json args = nlohmann::json::array();
    for (int in : groups[c].inputs) {
      int t = tensorFor(in);
      if (PlannedTensor* p = plannedOf(t); p && p->lastCall != INT_MAX) p->lastCall = std::max(p->lastCall, int(c));
      args.push_back(t);
    }
    int out = tensorFor(groups[c].output);
    if (PlannedTensor* p = plannedOf(out)) {
      p->firstCall = int(c);
      if (p->lastCall != INT_MAX) p->lastCall = int(c);
    }
    args.push_back(out);
    calls.push_back({{"kernel", kernelOfGroup[c]}, {"args", args}});
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (int o : graph.outputs()) {
    const Node& n = graph.node(o);
    TESSEL_CHECK(n.kind == NodeKind::Op, "graph output '{}' is an input or a constant: nothing to compute", n.name);
    outputs.push_back(tensorFor(o));
  }
  MemoryPlan memory = planMemory(planned);
  for (size_t i = 0; i < plannedTensorIds.size(); ++i) tensors[size_t(plannedTensorIds[i])]["storage"] = memory.storageOf[i];
  nlohmann::json plan = {{"format", "tessel.graph_executor"}, {"version", 1}, {"storages", memory.storageBytes},
                         {"tensors", tensors}, {"inputs", inputs}, {"outputs", outputs}, {"calls", calls}};
  // A GPU plan names its device kind, so that loading it for another kind is a clear error.
  if (gpu) plan["device"] = codegen::gpuDialectOfTarget(options.target) == codegen::GpuDialect::Cuda ? "cuda" : "opencl";
  // The module's directory is synced as a whole by whoever makes it complete (AtomicDirectory).
  writeFile(directory + "/" + runtime::kGraphPlanFile, plan.dump(1), SyncToDisk::kNo);
  runtime::saveParams(params, directory + "/params.bin");

  BuildReport report;
  report.functions = int(groups.size());
  report.distinctKernels = int(kernelOfKey.size());
  report.plannedBytes = memory.plannedBytes();
  report.naiveBytes = memory.naiveBytes;
  report.compileSeconds = compileSeconds;
  return report;
}

}  // namespace tessel::graph
