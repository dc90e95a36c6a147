/// The parts of the `_tessel` extension module (the `tessel` Python package's native half), one
/// function per file that adds its classes and functions to the module. Only the extension's
/// own sources include this header: pybind11 stays out of every installed tessel header.
#pragma once
#include <pybind11/pybind11.h>

namespace tessel::python {

void bindErrors(pybind11::module_& m);   ///< TesselError (Errors.cpp)
void bindModels(pybind11::module_& m);   ///< Model, load_zoo, load_onnx (Models.cpp)
void bindBuild(pybind11::module_& m);    ///< Module, build, load_module (Build.cpp)
void bindRuntime(pybind11::module_& m);  ///< GraphModule, time evaluation (Runtime.cpp)
void bindTuning(pybind11::module_& m);   ///< Task, Trial, extract_tasks, tune_task (Tuning.cpp)
/// SearchTask, extract_search_tasks, schedule_tasks (AutoScheduler.cpp); after bindTuning (Trial)
void bindAutoScheduler(pybind11::module_& m);
void bindRecords(pybind11::module_& m);  ///< pick_best, tuning_curves (Records.cpp)

}  // namespace tessel::python
