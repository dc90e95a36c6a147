/// The one numbering of a network's tuning tasks. `tessel tune` tunes these tasks, numbered
/// from 1; `tessel tasks` and `tune --list-tasks` print the very same list (numbers, names,
/// templates), `tune --tasks N` selects the task listed as N, and the progress lines, the
/// confirmations and the task scheduler's table name tasks by these numbers, also when only
/// some are tuned.
///
/// What a task is depends on the tuner: template tuning (`--scheduler autotvm`) has a task per
/// fused function and template (a GPU function is also tuned with gpu_default), and no task for
/// a function no template applies to (pooling, softmax, ...: listed apart as not tuned); the
/// auto-scheduler (`--scheduler auto`) has a task per fused function. Under `--winograd auto`
/// a Winograd candidate layer is a task in each of its variants, listed together (CPU: the
/// rules' form, then the direct convolution, then one tile size larger (F(4x4) for F(2x2),
/// F(6x6) for F(4x4) where it fits the L2); GPU: direct, then
/// Winograd), and the build takes the fastest (chooseByRecords).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/PreparedModel.h"
#include "graph/Fusion.h"
#include "graph/TaskExtraction.h"
#include "passes/GpuLimits.h"
#include "target/Target.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::driver {

/// Which tuner the tasks are for: templates (AutoTVM's kind) or the template-free auto-scheduler.
enum class SearchKind { Templates, AutoScheduler };

/// When candidates are measured with cold caches: where the network's weights do not stay in the
/// caches (Auto, ColdCachePolicy), for every task (Always) or none (Never).
enum class ColdCacheMode { Auto, Always, Never };



/// Which tasks are measured with cold caches (--cold-cache auto|always|never). A network's
/// weights stream through the caches once per inference: when they are more than the last-level
/// cache holds, a layer's weights were evicted by the layers in between by the time it runs
/// again, and come from DRAM. `auto` measures cold the tasks whose weights are more than the
/// per-core L2 (smaller ones stay near the core in any case), in such networks only.
class ColdCachePolicy {
 public:
  ColdCachePolicy(const graph::Graph& graph, ColdCacheMode mode, const target::CpuMachine& machine);
  /// `task` is one of `graph`'s (the network's variants have their own groups).
  bool measureCold(const graph::Graph& graph, const graph::Task& task);
  /// Why tasks are measured cold; empty when none is for that reason.
  const std::string& reason() const { return reason_; }

 private:
  ColdCacheMode mode_;
  std::string reason_;
  size_t paramBytes_ = 0, llc_ = 0, l2_ = 0;
  std::map<const graph::Graph*, std::vector<graph::FusedGroup>> groupsOf_;
};

/// How the list is made: for which tuner, measured where.
struct TaskListOptions {
  SearchKind search = SearchKind::Templates;
  ColdCacheMode coldCache = ColdCacheMode::Auto;  ///< CPU targets
  target::Target target = target::Target::host();  ///< what candidates are measured on
  /// GPU targets: the limits kernels are verified against, and the CPU of the reference.
  std::optional<passes::GpuLimits> gpuLimits;
  target::Target gpuHost = target::Target::host();
};

struct ListedTask {
  size_t number = 0;                      ///< from 1, as listed
  const graph::Graph* graph = nullptr;    ///< the variant of the network it is a function of
  graph::Task function;                   ///< the fused function
  tune::autotvm::TuningTaskPtr tuning;    ///< template tuning: its task (template, space); else null
  bool measureCold = false;
};

struct TaskList {
  SearchKind search = SearchKind::Templates;
  std::vector<ListedTask> tasks;
  std::vector<graph::Task> notTuned;  ///< template tuning: the functions no template applies to
  std::string coldReason;             ///< ColdCachePolicy::reason()
};

/// The tasks of a prepared network (it must outlive the list: tasks point into its variants).
TaskList listTuningTasks(const PreparedModel& prepared, const TaskListOptions& options);

/// The workload key a task's records carry: a template's compute may differ from the function's
/// (a packed layout, a Winograd form), so its own; else the function's.
std::string recordedWorkloadKey(const ListedTask& task);

/// "Extracted 22 tasks:" and a line per task — its number, name, template (auto-scheduler
/// tasks: "auto: " and the heaviest op, "auto: winograd_gemm"),
/// MFLOP, configs, whether measured cold — then the functions not tuned and why tasks are
/// measured cold. When `numbers` or `ops` select (selectTasks), only the selected tasks'
/// lines, under "Extracted 22 tasks; tuning 2 of them (--tasks, --ops):".
std::string formatTaskList(const TaskList& list, const std::vector<size_t>& numbers = {}, const std::vector<std::string>& ops = {});

/// The op of a DAG with the most FLOPs: what kind of computation a task is ("conv2d_nhwc",
/// "winograd_gemm", "pool_max": a layer's variants told apart).
te::Operation heaviestOperation(const te::ComputeDAG& dag);

/// Each task's compute DAG under its number, as seed 001 prints tasks:
/// "========== Task 3  (workload key: K) ==========" and the DAG.
std::string formatTaskDags(const std::vector<ListedTask>& tasks);

/// "[Task  3/22] ": the prefix of a task's progress and decision lines.
std::string taskPrefix(const ListedTask& task, const TaskList& list);

/// --ops's operator classes, comma-separated (conv2d, depthwise_conv2d, dense, in any case);
/// Error naming any other.
std::vector<std::string> parseOps(const std::string& text);

/// The tasks `--tasks` (numbers as listed; empty: all) and `--ops` (empty: all) select, in
/// list order, their numbers kept; Error naming a number the list does not have.
std::vector<ListedTask> selectTasks(const TaskList& list, const std::vector<size_t>& numbers, const std::vector<std::string>& ops);

}  // namespace tessel::driver
