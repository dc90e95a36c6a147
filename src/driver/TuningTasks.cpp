#include "driver/TuningTasks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "ops/OpTraits.h"
#include "ops/Schedules.h"
#include "support/Error.h"
#include "tune/autotvm/CpuTemplates.h"
#include "tune/autotvm/GpuTemplates.h"

namespace tessel::driver {

ColdCachePolicy::ColdCachePolicy(const graph::Graph& graph, ColdCacheMode mode, const target::CpuMachine& machine) : mode_(mode) {
  for (const auto& [name, value] : graph.params()) paramBytes_ += value.nbytes();
  llc_ = size_t(machine.llcBytes);
  l2_ = size_t(machine.l2Bytes);
  if (mode_ == ColdCacheMode::Auto && paramBytes_ > llc_)
    reason_ = fmt::format("The network's weights ({:.1f} MiB) are more than the last-level cache ({:.1f} MiB): tasks whose "
                          "weights exceed the L2 ({:.1f} MiB) are measured with cold caches, as they run in the network",
                          paramBytes_ / 1048576.0, llc_ / 1048576.0, l2_ / 1048576.0);
}

bool ColdCachePolicy::measureCold(const graph::Graph& graph, const graph::Task& task) {
  if (mode_ != ColdCacheMode::Auto) return mode_ == ColdCacheMode::Always;
  if (paramBytes_ <= llc_ || task.groups.empty()) return false;
  auto& groups = groupsOf_[&graph];
  if (groups.empty()) groups = graph::fuseOperators(graph);
  size_t weights = 0;
  for (int input : groups[size_t(task.groups.front())].inputs)
    if (graph.node(input).kind == graph::NodeKind::Constant) weights += graph.constant(input).nbytes();
  return weights > l2_;
}

namespace {

/// The functions of the network and of its other variants, each variant's function of a layer
/// right after the chosen one's (same name), each workload once.
std::vector<std::pair<const graph::Graph*, graph::Task>> variantFunctions(const PreparedModel& prepared) {
  std::vector<const graph::Graph*> others;
  if (prepared.variants) {
    if (!prepared.chosenIsDirect) others.push_back(&prepared.direct);
    for (size_t v = prepared.chosenIsDirect ? 0 : 1; v < prepared.winograd.size(); ++v) others.push_back(&prepared.winograd[v]);
  }
  std::vector<std::vector<graph::Task>> otherTasks;
  for (const graph::Graph* other : others) otherTasks.push_back(graph::extractTasks(*other));
  std::vector<std::pair<const graph::Graph*, graph::Task>> functions;
  std::set<std::string> keys;
  std::vector<graph::Task> chosenTasks = graph::extractTasks(prepared.chosen);
  for (const auto& t : chosenTasks) keys.insert(t.workloadKey);
  for (auto& t : chosenTasks) {
    std::string name = t.name;
    functions.emplace_back(&prepared.chosen, std::move(t));
    for (size_t o = 0; o < others.size(); ++o)
      for (const auto& d : otherTasks[o])
        if (d.name == name && keys.insert(d.workloadKey).second) functions.emplace_back(others[o], d);
  }
  for (size_t o = 0; o < others.size(); ++o)
    for (const auto& d : otherTasks[o])
      if (keys.insert(d.workloadKey).second) functions.emplace_back(others[o], d);
  return functions;
}

/// A copy of a tuning task measuring with `change` applied to its measure task.
template <class Change>
tune::autotvm::TuningTaskPtr withMeasure(const tune::autotvm::TuningTaskPtr& task, Change change) {
  auto measure = std::make_shared<tune::MeasureTask>(*task->measure);
  change(*measure);
  auto copy = std::make_shared<tune::autotvm::TuningTask>(*task);
  copy->measure = measure;
  return copy;
}

/// The operator classes --ops may name that select a function, by its anchor: "conv2d" covers
/// every convolution (depthwise and grouped are conv2d with groups, as in Relay; Winograd's
/// GEMM too), "depthwise_conv2d" only depthwise ones, "dense" also matmul (packed or not) and
/// batch_matmul; none for a function without an anchor.
std::vector<std::string> opsClassesOf(const te::ComputeDAG& dag) {
  auto anchor = ops::findAnchorStage(dag);
  if (!anchor) return {};
  switch (ops::traitsOf(*dag.op(*anchor)).kind) {
    case ops::OpKind::Dense:
    case ops::OpKind::Matmul:
    case ops::OpKind::MatmulPacked:
    case ops::OpKind::BatchMatmul: return {"dense"};
    case ops::OpKind::DepthwiseConv2dNCHW:
    case ops::OpKind::DepthwiseConv2dNHWC: return {"conv2d", "depthwise_conv2d"};
    case ops::OpKind::Conv2dNCHW:
    case ops::OpKind::Conv2dNHWC:
    case ops::OpKind::Conv2dNHWCPacked:
    case ops::OpKind::GroupConv2dNCHW:
    case ops::OpKind::GroupConv2dNHWC:
    case ops::OpKind::Conv2dTransposeNCHW:
    case ops::OpKind::WinogradGemm:
    case ops::OpKind::WinogradNchwGemm: return {"conv2d"};
    default: return {};
  }
}

/// Whether --ops (empty: every function) selects a function.
bool selectedByOps(const te::ComputeDAG& dag, const std::vector<std::string>& ops) {
  if (ops.empty()) return true;
  auto classes = opsClassesOf(dag);
  for (const std::string& op : ops)
    if (std::find(classes.begin(), classes.end(), op) != classes.end()) return true;
  return false;
}

}  // namespace

te::Operation heaviestOperation(const te::ComputeDAG& dag) {
  te::Operation heaviest;
  double most = -1;
  for (const auto& op : dag.ops())
    if (!op->isPlaceholder() && te::operationFlops(*op) > most) {
      most = te::operationFlops(*op);
      heaviest = op;
    }
  TESSEL_CHECK(heaviest != nullptr, "a task without a compute op");
  return heaviest;
}

TaskList listTuningTasks(const PreparedModel& prepared, const TaskListOptions& o) {
  const bool gpu = o.target.isGpu();
  ColdCachePolicy cold(prepared.chosen, gpu ? ColdCacheMode::Never : o.coldCache, o.target.isCpu() ? o.target.cpu : target::hostCpu());
  TaskList list;
  list.search = o.search;
  list.coldReason = cold.reason();
  auto add = [&](const graph::Graph* g, const graph::Task& t, tune::autotvm::TuningTaskPtr tuning, bool measureCold) {
    list.tasks.push_back({list.tasks.size() + 1, g, t, std::move(tuning), measureCold});
  };
  for (const auto& [g, t] : variantFunctions(prepared)) {
    bool measureCold = cold.measureCold(*g, t);
    if (o.search == SearchKind::AutoScheduler) {
      add(g, t, nullptr, measureCold);
    } else if (gpu) {
      // Every function has a GPU template (gpu_default at least), some two.
      TESSEL_CHECK(o.gpuLimits.has_value(), "listing GPU tasks: no limits to verify their kernels against");
      for (const std::string& templateName : tune::autotvm::gpuTemplatesTuned(t.dag))
        add(g, t, withMeasure(tune::autotvm::makeGpuTuningTask(t.name, t.dag, o.target, *o.gpuLimits, templateName),
                              [&](tune::MeasureTask& m) { m.hostTarget = o.gpuHost; }),
            false);
    } else if (auto templateName = tune::autotvm::cpuTemplateFor(t.dag, o.target)) {
      auto task = tune::autotvm::makeCpuTuningTask(t.name, t.dag, o.target, *templateName);
      if (measureCold) task = withMeasure(task, [](tune::MeasureTask& m) { m.coldCache = true; });
      add(g, t, task, measureCold);
    } else {
      list.notTuned.push_back(t);
    }
  }
  return list;
}

std::string recordedWorkloadKey(const ListedTask& task) {
  return task.tuning ? task.tuning->measure->workloadKey : task.function.workloadKey;
}

std::string formatTaskList(const TaskList& list, const std::vector<size_t>& numbers, const std::vector<std::string>& ops) {
  const bool selecting = !numbers.empty() || !ops.empty();
  const std::vector<ListedTask> selected = selectTasks(list, numbers, ops);
  std::string out = selecting ? fmt::format("Extracted {} tasks; tuning {} of them (--tasks, --ops):\n", list.tasks.size(), selected.size())
                              : fmt::format("Extracted {} tasks:\n", list.tasks.size());
  // The names' column: 28 wide, or as wide as the longest name (ONNX value names such as
  // "/layers.0/attention/query/Add_output_0"), so the columns after it stay aligned.
  size_t nameWidth = 28;
  for (const ListedTask& t : selected) nameWidth = std::max(nameWidth, t.function.name.size());
  for (const ListedTask& t : selected) {
    std::string configs;
    if (t.tuning) {
      uint64_t size = t.tuning->space->size();
      configs = fmt::format("  {:>6} configs{}", size, t.tuning->unprunedSize > size ? fmt::format(" (of {})", t.tuning->unprunedSize) : "");
    }
    out += fmt::format("  {:>2}  {:<{}} {:<26} {:>10.1f} MFLOP{}{}\n", t.number, t.function.name, nameWidth,
                       t.tuning ? t.tuning->templateName : "auto: " + heaviestOperation(t.function.dag)->name, t.function.flops / 1e6, configs,
                       t.measureCold ? "  measured cold" : "");
  }
  if (!list.notTuned.empty()) {
    std::vector<std::string> names;
    for (const graph::Task& t : list.notTuned) names.push_back(t.name);
    out += fmt::format("Not tuned by templates ({} function{} no template applies to; `--scheduler auto` tunes every function): {}\n",
                       names.size(), names.size() == 1 ? "" : "s", fmt::join(names, ", "));
  }
  if (!list.coldReason.empty()) out += list.coldReason + "\n";
  return out;
}

std::string formatTaskDags(const std::vector<ListedTask>& tasks) {
  std::vector<graph::Task> functions;
  std::vector<size_t> numbers;
  for (const ListedTask& t : tasks) {
    functions.push_back(t.function);
    numbers.push_back(t.number);
  }
  return graph::formatTasks(functions, numbers);
}

std::string taskPrefix(const ListedTask& task, const TaskList& list) {
  return fmt::format("[Task {:>2}/{:>2}] ", task.number, list.tasks.size());
}

std::vector<std::string> parseOps(const std::string& text) {
  std::vector<std::string> ops;
  std::stringstream in(text);
  for (std::string op; std::getline(in, op, ',');) {
    if (op.empty()) continue;
    std::string lower = op;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    TESSEL_CHECK(lower == "conv2d" || lower == "depthwise_conv2d" || lower == "dense",
                 "--ops: unknown operator '{}' (conv2d, depthwise_conv2d, dense)", op);
    ops.push_back(lower);
  }
  return ops;
}

std::vector<ListedTask> selectTasks(const TaskList& list, const std::vector<size_t>& numbers, const std::vector<std::string>& ops) {
  for (size_t n : numbers)
    TESSEL_CHECK(n >= 1 && n <= list.tasks.size(), "--tasks: there is no task {} (the network has {}, numbered from 1 as `tessel tasks` "
                 "lists them)", n, list.tasks.size());
  std::vector<ListedTask> chosen;
  for (const ListedTask& t : list.tasks)
    if ((numbers.empty() || std::find(numbers.begin(), numbers.end(), t.number) != numbers.end()) && selectedByOps(t.function.dag, ops))
      chosen.push_back(t);
  return chosen;
}

}  // namespace tessel::driver
