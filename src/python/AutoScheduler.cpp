// tessel.auto_scheduler's native half: a network's auto-scheduler tasks (extract_tasks) and
// the task scheduler's run over some of them through driver::tuneNetwork (TaskScheduler.tune),
// as `tessel tune --scheduler auto --tasks ... --no-evaluate` runs it without the build.
#include <pybind11/functional.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "driver/TuneNetwork.h"
#include "driver/TuningTasks.h"
#include "python/Bindings.h"
#include "python/TaskSource.h"
#include "support/Error.h"
#include "tune/RecordLog.h"

namespace py = pybind11;

namespace tessel::python {

namespace {

/// One auto-scheduler task of the list (TVM's SearchTask): a fused function.
using SearchTask = ListedTaskOf<driver::SearchKind::AutoScheduler>;

/// A task's computation, printed as seed 001 prints `task.compute_dag`.
struct ComputeDagText {
  std::string text;
  double flops = 0;
};

/// What TaskScheduler.tune asks for beyond the tasks, from Python (TuningOptions).
struct ScheduleSettings {
  std::string strategy;  ///< "gradient" or "round-robin"
  std::string log;       ///< RecordToFile's
  bool resume = false;   ///< load_log_file: the log's trials of these tasks count and teach first
  int64_t nTrial = 0;
  std::optional<int64_t> batchSize;  ///< num_measures_per_round; unset: the driver's default
  uint64_t seed = 0;
  bool verbose = false;  ///< the tune layer's lines (progress, the scheduler's table) to stdout
  tune::LocalBuilderOptions build;
  tune::LocalRunnerOptions measure;
};

/// One task's tuning in the run.
struct ScheduledOutcome {
  size_t task = 0;  ///< its number
  int64_t resumedTrials = 0, trials = 0, errors = 0;
  double bestCost = 0;  ///< seconds; +inf without a valid trial
  bool keptDefault = true;
};

driver::TaskSchedulerKind schedulerKind(const std::string& strategy) {
  if (strategy == "gradient") return driver::TaskSchedulerKind::Gradient;
  if (strategy == "round-robin") return driver::TaskSchedulerKind::RoundRobin;
  fail("TaskScheduler: strategy must be \"gradient\" or \"round-robin\", got \"{}\"", strategy);
}

/// A log to resume from must hold trials measured for this target: resuming from another
/// target's log would silently start afresh (the driver matches records by target string).
void checkResumedLogTarget(const std::string& log, const target::Target& target) {
  if (!std::filesystem::exists(log)) return;
  auto file = tune::readRecords(log);
  if (file.records.empty()) return;
  std::set<std::string> targets;
  for (const tune::TuningRecord& r : file.records) {
    if (r.target == target.str()) return;
    targets.insert(r.target);
  }
  fail("load_log_file {}: its {} records were measured for '{}', not for this run's target '{}'", log, file.records.size(),
       fmt::join(targets, "', '"), target.str());
}

std::vector<ScheduledOutcome> scheduleTasks(const std::vector<SearchTask>& tasks, const ScheduleSettings& s,
                                            const std::function<void(const Trial&)>& onTrial) {
  TESSEL_ICHECK(!tasks.empty());  // TaskScheduler refuses an empty list (tessel/auto_scheduler/task_scheduler.py)
  const TaskSource& source = *tasks.front().source;
  for (const SearchTask& t : tasks)
    TESSEL_CHECK(t.source.get() == &source, "TaskScheduler: the tasks come from more than one extract_tasks call; tune each network apart");
  std::vector<driver::ListedTask> asked;
  for (const SearchTask& t : tasks) asked.push_back(t.listed());
  driver::TuneNetworkOptions o = tuneOptionsFor(source, driver::SearchKind::AutoScheduler, asked, s.log);
  o.taskScheduler = schedulerKind(s.strategy);
  o.nTrial = s.nTrial;
  if (s.batchSize) {
    TESSEL_CHECK(*s.batchSize >= 1, "TuningOptions: num_measures_per_round must be at least 1, got {}", *s.batchSize);
    o.batchSize = size_t(*s.batchSize);
  }
  o.seed = s.seed;
  o.resume = s.resume;
  o.build = s.build;
  o.measure = s.measure;
  if (s.verbose) o.tuneLinesTo = stdout;
  if (s.resume) checkResumedLogTarget(s.log, o.prepare.target);
  const driver::TuneCallbacks callbacks = tuneCallbacksFor(std::move(asked), onTrial);
  driver::TuneNetworkResult result = driver::tuneNetwork(o, callbacks);
  if (s.verbose) std::fflush(stdout);
  std::vector<ScheduledOutcome> outcomes;
  for (const driver::TunedTask& t : result.tasks)
    outcomes.push_back({t.number, t.resumedTrials, t.trials, t.errors, t.bestCost, !t.decision || t.decision->keptDefault});
  return outcomes;
}

}  // namespace

void bindAutoScheduler(py::module_& m) {
  py::class_<ComputeDagText>(m, "ComputeDAG", "a task's computation; str() prints it as seed 001 does")
      .def_readonly("flop_ct", &ComputeDagText::flops, "floating-point operations of one run")
      .def("__str__", [](const ComputeDagText& d) { return d.text; })
      .def("__repr__", [](const ComputeDagText& d) { return d.text; });

  py::class_<SearchTask>(m, "SearchTask", "an auto-scheduler task: a fused function of the network")
      .def_property_readonly("number", [](const SearchTask& t) { return t.listed().number; },
                             "as `tessel tasks --scheduler auto` lists it, from 1")
      .def_property_readonly("desc", [](const SearchTask& t) { return t.listed().function.name; })
      .def_property_readonly("workload_key", [](const SearchTask& t) { return t.listed().function.workloadKey; })
      .def_property_readonly("weight", [](const SearchTask& t) { return t.listed().function.weight; },
                             "how many fused functions of the network are this task")
      .def_property_readonly("flops", [](const SearchTask& t) { return t.listed().function.flops; })
      .def_property_readonly("compute_dag",
                             [](const SearchTask& t) {
                               return ComputeDagText{t.listed().function.dag.toString(), t.listed().function.flops};
                             })
      .def("__repr__", [](const SearchTask& t) {
        return "<tessel.auto_scheduler.SearchTask " + std::to_string(t.listed().number) + " " + t.listed().function.name + ">";
      });
  m.def("extract_search_tasks", &extractTasksOf<driver::SearchKind::AutoScheduler>, py::arg("model"), py::arg("target"),
        py::call_guard<py::gil_scoped_release>());

  py::class_<ScheduledOutcome>(m, "ScheduledOutcome", "a task's tuning in a TaskScheduler.tune run")
      .def_readonly("task", &ScheduledOutcome::task)
      .def_readonly("resumed_trials", &ScheduledOutcome::resumedTrials, "its trials in the log before the run")
      .def_readonly("trials", &ScheduledOutcome::trials)
      .def_readonly("errors", &ScheduledOutcome::errors)
      .def_readonly("best_cost", &ScheduledOutcome::bestCost, "seconds; inf without a valid trial")
      .def_readonly("kept_default", &ScheduledOutcome::keptDefault, "the confirmation kept the default schedule")
      .def("__repr__", [](const ScheduledOutcome& o) {
        return fmt::format("<ScheduledOutcome task {}: {} trials ({} resumed, {} errors), best {:.3g} s{}>", o.task, o.trials,
                           o.resumedTrials, o.errors, o.bestCost, o.keptDefault ? ", default kept" : "");
      });

  m.def(
      "schedule_tasks",
      [](const std::vector<SearchTask>& tasks, const std::string& strategy, int64_t nTrial, std::optional<int64_t> batchSize,
         const std::string& log, bool resume, uint64_t seed, bool verbose, const tune::LocalBuilderOptions& build,
         const tune::LocalRunnerOptions& measure, const std::function<void(const Trial&)>& onTrial) {
        ScheduleSettings s{strategy, log, resume, nTrial, batchSize, seed, verbose, build, measure};
        py::gil_scoped_release release;
        return scheduleTasks(tasks, s, onTrial);
      },
      py::arg("tasks"), py::arg("strategy"), py::arg("n_trial"), py::arg("batch_size"), py::arg("log"), py::arg("resume"),
      py::arg("seed"), py::arg("verbose"), py::arg("builder"), py::arg("runner"), py::arg("on_trial"));
}

}  // namespace tessel::python
