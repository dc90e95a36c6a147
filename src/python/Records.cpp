// tessel.autotvm.record.pick_best: a log with the best valid record of each task, as `tessel
// records best` writes it (tune/RecordQueries.h's ranking; records that do not replay are not ranked).
#include <pybind11/stl.h>

#include "python/Bindings.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"

namespace py = pybind11;

namespace tessel::python {

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
        for (const std::string& warning : warnings)
          if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
        return kept;
      },
      py::arg("in_file"), py::arg("out_file"),
      "writes the best valid record of each task of `in_file` to `out_file`; returns how many");
}

}  // namespace tessel::python
