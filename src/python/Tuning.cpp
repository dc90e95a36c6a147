// tessel.autotvm's native half: a network's tuning tasks (extract_from_program) and one task
// tuned through driver::tuneNetwork (tuner.tune), every trial logged and reported to Python.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>

#include "driver/TuneNetwork.h"
#include "driver/TuningTasks.h"
#include "python/Bindings.h"
#include "python/Model.h"
#include "python/TaskSource.h"
#include "support/Error.h"

namespace py = pybind11;

namespace tessel::python {

namespace {

/// One template tuning task of the list: a fused function and its template.
using Task = ListedTaskOf<driver::SearchKind::Templates>;

/// What a tune() call asks for beyond the task, from Python.
struct TuneSettings {
  std::string tuner, log;
  int64_t nTrial = 0, earlyStopping = 0;
  uint64_t seed = 0;
  tune::LocalBuilderOptions build;  ///< autotvm.LocalBuilder
  tune::LocalRunnerOptions measure;  ///< autotvm.LocalRunner
};

struct TaskOutcome {
  int64_t trials = 0, errors = 0;
  double bestCost = 0;  ///< seconds; +inf without a valid trial
  std::optional<uint64_t> bestConfig;
  bool keptDefault = true;  ///< the confirmation kept the default schedule
};

/// Tunes `task` alone, as `tessel tune --tasks N --tuner T --n-trial ... --log L --no-evaluate`
/// does and without building the network. `onTrial` (with the GIL) sees every logged trial;
/// after it, Ctrl-C is honoured.
TaskOutcome tuneTask(const Task& task, const TuneSettings& s, const std::function<void(const Trial&)>& onTrial) {
  driver::TuneNetworkOptions o = tuneOptionsFor(*task.source, driver::SearchKind::Templates, {task.listed()}, s.log);
  o.tuner = s.tuner;
  o.nTrial = s.nTrial;
  o.earlyStopping = s.earlyStopping;
  o.seed = s.seed;
  o.build = s.build;
  o.measure = s.measure;
  const driver::TuneCallbacks callbacks = tuneCallbacksFor({task.listed()}, onTrial);
  driver::TuneNetworkResult result = driver::tuneNetwork(o, callbacks);
  const driver::TunedTask& tuned = result.tasks.at(0);
  return {tuned.trials, tuned.errors, tuned.bestCost, tuned.bestConfig, !tuned.decision || tuned.decision->keptDefault};
}

}  // namespace

void bindTuning(py::module_& m) {
  py::class_<Task>(m, "Task", "a tuning task: a fused function of the network and its template")
      .def_property_readonly("number", [](const Task& t) { return t.listed().number; }, "as `tessel tasks` lists it, from 1")
      .def_property_readonly("name", [](const Task& t) { return t.listed().function.name; })
      .def_property_readonly("template", [](const Task& t) { return t.listed().tuning->templateName; })
      .def_property_readonly("workload_key", [](const Task& t) { return t.listed().function.workloadKey; })
      .def_property_readonly("flops", [](const Task& t) { return t.listed().function.flops; })
      .def_property_readonly("config_space_size", [](const Task& t) { return t.listed().tuning->space->size(); })
      .def("__repr__", [](const Task& t) {
        return "<tessel.autotvm.Task " + std::to_string(t.listed().number) + " " + t.listed().function.name + " (" +
               t.listed().tuning->templateName + ")>";
      });
  m.def("extract_tasks", &extractTasksOf<driver::SearchKind::Templates>, py::arg("model"), py::arg("target"),
        py::call_guard<py::gil_scoped_release>());

  py::class_<Trial>(m, "Trial", "one measured trial, as it was logged (either tuner)")
      .def_readonly("task", &Trial::task)
      .def_readonly("trial", &Trial::trial)
      .def_readonly("config_index", &Trial::configIndex)
      .def_readonly("config", &Trial::config)
      .def_readonly("steps", &Trial::steps, "the measured schedule, a step per line")
      .def_readonly("costs", &Trial::costs, "seconds per call, one per repeat; empty on error")
      .def_readonly("error_no", &Trial::errorNo)
      .def_readonly("error_name", &Trial::errorName)
      .def_readonly("error_msg", &Trial::errorMessage)
      .def_readonly("all_cost", &Trial::allCost)
      .def_readonly("timestamp", &Trial::timestamp);

  py::class_<TaskOutcome>(m, "TaskOutcome")
      .def_readonly("trials", &TaskOutcome::trials)
      .def_readonly("errors", &TaskOutcome::errors)
      .def_readonly("best_cost", &TaskOutcome::bestCost)
      .def_readonly("best_config", &TaskOutcome::bestConfig)
      .def_readonly("kept_default", &TaskOutcome::keptDefault);

  // autotvm.LocalBuilder and autotvm.LocalRunner are these options (tessel/autotvm/measure.py).
  py::class_<tune::LocalBuilderOptions>(m, "LocalBuilderOptions")
      .def(py::init<>())
      .def_readwrite("n_parallel", &tune::LocalBuilderOptions::nParallel, "builds at once (0: the cores)")
      .def_property(
          "timeout", [](const tune::LocalBuilderOptions& o) { return double(o.timeout.count()) / 1000; },
          [](tune::LocalBuilderOptions& o, double seconds) { o.timeout = std::chrono::milliseconds(int64_t(seconds * 1000)); },
          "seconds a candidate may take to build");
  py::class_<tune::LocalRunnerOptions>(m, "LocalRunnerOptions")
      .def(py::init<>())
      .def_readwrite("number", &tune::LocalRunnerOptions::number)
      .def_readwrite("repeat", &tune::LocalRunnerOptions::repeat)
      .def_readwrite("min_repeat_ms", &tune::LocalRunnerOptions::minRepeatMs)
      .def_readwrite("timeout", &tune::LocalRunnerOptions::timeoutSeconds, "seconds a candidate may run")
      .def_readwrite("cooldown_interval", &tune::LocalRunnerOptions::cooldownIntervalSeconds, "seconds between two candidates")
      .def_readwrite("enable_cpu_cache_flush", &tune::LocalRunnerOptions::enableCpuCacheFlush, "cold caches before every call");

  m.def(
      "tune_task",
      [](const Task& task, const std::string& tuner, int64_t nTrial, int64_t earlyStopping, const std::string& log, uint64_t seed,
         const tune::LocalBuilderOptions& build, const tune::LocalRunnerOptions& measure, const std::function<void(const Trial&)>& onTrial) {
        TuneSettings s{tuner, log, nTrial, earlyStopping, seed, build, measure};
        py::gil_scoped_release release;
        return tuneTask(task, s, onTrial);
      },
      py::arg("task"), py::arg("tuner"), py::arg("n_trial"), py::arg("early_stopping"), py::arg("log"), py::arg("seed"),
      py::arg("builder"), py::arg("runner"), py::arg("on_trial"));
}

}  // namespace tessel::python
