// tessel.autotvm.record.pick_best: a log with the best valid record of each task, as `tessel
// records best` writes it (tune/RecordQueries.h's ranking; records that do not replay are not
// ranked); and the curves of a log that tessel.records.plot draws (tune/TuningCurves.h), as JSON
// text, the very text `tessel records plot` gives the drawing code.
#include <pybind11/stl.h>

#include <exception>

#include "driver/NetworkTaskWeights.h"
#include "python/Bindings.h"
#include "python/Model.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"
#include "tune/TuningCurves.h"

namespace py = pybind11;

namespace tessel::python {

namespace {

/// Python warnings, raised once the GIL is held again.
void warnAll(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings)
    if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
}

/// The curves of `log`'s records of `target` (empty: its only one), weighed by `model`'s tasks
/// when one is given, as JSON text; damaged lines of the log become `warnings`.
std::string curvesJson(const std::string& log, const std::string& target, const Model* model, std::vector<std::string>& warnings) {
  tune::RecordFile file = tune::readRecords(log);
  if (!file.report.skipped.empty()) warnings.push_back(log + ": " + file.report.describeSkipped());
  tune::TuningCurveOptions options;
  try {
    options.target = tune::curveTarget(file.records, target);
  } catch (const Error& e) {
    throw e.withContext(log);
  }
  if (model) {
    driver::PrepareOptions prepare;
    prepare.target = target::Target::parse(options.target);
    prepare.desiredLayout = driver::defaultDesiredLayout(prepare.target);
    options.weights = driver::networkTaskWeights(driver::prepareModel(model->graph, prepare), prepare.target);
  }
  return tune::tuningCurvesToJson(tune::tuningCurves(file, options)).dump();
}

}  // namespace

void bindRecords(py::module_& m) {
  m.def(
      "pick_best",
      [](const std::string& in, const std::string& out) {
        std::vector<std::string> warnings;
        size_t kept = 0;
        {
          py::gil_scoped_release release;
          tune::RecordFile file = tune::readRecords(in);
          if (!file.report.skipped.empty()) warnings.push_back(in + ": " + file.report.describeSkipped());
          std::vector<tune::RejectedRecord> rejected;
          std::vector<tune::TuningRecord> best = tune::topRecords(file.records, 1, &rejected);
          for (const tune::RejectedRecord& r : rejected) warnings.push_back(r.describe() + "; it is not ranked");
          tune::writeRecordLog(out, best);
          kept = best.size();
        }
        // What `tessel records best` prints as warnings, as Python warnings.
        warnAll(warnings);
        return kept;
      },
      py::arg("in_file"), py::arg("out_file"),
      "writes the best valid record of each task of `in_file` to `out_file`; returns how many");
  m.def(
      "tuning_curves",
      [](const std::string& log, const std::string& target, const Model* model) {
        std::vector<std::string> warnings;
        std::string json;
        std::exception_ptr failure;
        {
          py::gil_scoped_release release;
          try {
            json = curvesJson(log, target, model, warnings);
          } catch (...) {
            failure = std::current_exception();
          }
        }
        // The damaged lines are said also when the log cannot be drawn (they may be why).
        warnAll(warnings);
        if (failure) std::rethrow_exception(failure);
        return json;
      },
      py::arg("log"), py::arg("target") = "", py::arg("model") = nullptr,
      "the curves of a records log that tessel.records.plot draws, as JSON text (tune/TuningCurves.h)");
}

}  // namespace tessel::python
