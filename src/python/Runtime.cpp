// tessel.runtime: GraphModule (graph_executor.GraphModule) over runtime::GraphExecutor, numpy
// in and out, and its time evaluator (Module.time_evaluator).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "python/Bindings.h"
#include "python/Interrupts.h"
#include "python/Module.h"
#include "runtime/GraphExecutor.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"

namespace py = pybind11;

namespace tessel::python {

namespace {

/// A module loaded on a device. It keeps the Module's temporary directory alive: the kernels'
/// shared library is mapped from it.
struct GraphModule {
  std::shared_ptr<TempDir> scratch;
  runtime::GraphExecutor executor;

  int inputIndex(const py::object& key) const {
    if (py::isinstance<py::int_>(key)) return key.cast<int>();
    const std::string name = key.cast<std::string>();
    for (int i = 0; i < executor.numInputs(); ++i)
      if (executor.inputName(i) == name) return i;
    std::string names;
    for (int i = 0; i < executor.numInputs(); ++i) names += (i ? ", " : "") + executor.inputName(i);
    fail("the graph has no input '{}' (inputs: {})", name, names);
  }

  /// One copy, numpy's memory into the input's buffer; an array that is not C-contiguous is
  /// first made contiguous by numpy (a second copy: the kernels read compact arrays). Its dtype
  /// is never converted: another dtype is an error, as a wrong shape is.
  void setInput(const py::object& key, const py::array& value) {
    int index = inputIndex(key);
    py::array compact = py::array::ensure(value, py::array::c_style);
    DataType dtype = DataType::parse(py::str(compact.dtype()).cast<std::string>());
    std::vector<int64_t> shape(compact.shape(), compact.shape() + compact.ndim());
    executor.setInputFromHost(index, dtype, shape, compact.data());
  }

  /// The output copied out of the executor's buffer (the next run() overwrites that buffer), into
  /// a tensor that the returned array views without another copy: the array holds the tensor.
  py::array getOutput(int index) const {
    auto* tensor = new runtime::Tensor(executor.getOutput(index));
    py::capsule owner(tensor, [](void* p) { delete static_cast<runtime::Tensor*>(p); });
    return py::array(py::dtype(tensor->dtype().str()), tensor->shape(), tensor->data(), owner);
  }
};

struct TimingSummary {
  double mean = 0, median = 0, std = 0, min = 0;
  std::vector<double> results;  ///< seconds per run, one per measurement
  int number = 0;
};

/// `repeat` measurements of `number` runs (number raised to last min_repeat_ms), as
/// GraphExecutor::benchmark times them. Ctrl-C is checked before each run: that takes the GIL
/// for a moment (well under a microsecond when no other Python thread holds it) inside the
/// timed region, small against a network's run.
TimingSummary timeRuns(GraphModule& module, int number, int repeat, double minRepeatMs) {
  runtime::TimeEvaluatorOptions options;
  options.number = number;
  options.repeat = repeat;
  options.minRepeatMs = minRepeatMs;
  runtime::TimingResult r = runtime::timeFunction(
      [&] {
        checkInterruptsWithoutGil();
        module.executor.run();
      },
      options);
  return {r.mean, r.median, r.stddev, r.min, r.costs, r.number};
}

}  // namespace

void bindRuntime(py::module_& m) {
  py::class_<runtime::Device>(m, "Device", "where a module runs: cpu, cuda[:N], opencl[:N]")
      .def(py::init(&runtime::Device::parse), py::arg("text"))
      .def("__str__", &runtime::Device::str)
      .def("__repr__", [](const runtime::Device& d) { return "<tessel.Device " + d.str() + ">"; });

  py::class_<TimingSummary>(m, "TimingResult", "times of a module's runs, in seconds")
      .def_readonly("mean", &TimingSummary::mean)
      .def_readonly("median", &TimingSummary::median)
      .def_readonly("std", &TimingSummary::std)
      .def_readonly("min", &TimingSummary::min)
      .def_readonly("results", &TimingSummary::results, "seconds per run, one per measurement")
      .def_readonly("number", &TimingSummary::number, "runs per measurement, as finally used");

  py::class_<GraphModule>(m, "GraphModule")
      .def(py::init([](const Module& module, const runtime::Device& device) {
             runtime::GraphExecutorOptions options;
             options.device = device;
             py::gil_scoped_release release;
             return new GraphModule{module.scratch, runtime::GraphExecutor::load(module.directory, options)};
           }),
           py::arg("module"), py::arg("device"))
      .def("set_input", &GraphModule::setInput, py::arg("key"), py::arg("value"))
      .def("run", [](GraphModule& g) { g.executor.run(); }, py::call_guard<py::gil_scoped_release>())
      .def("get_output", &GraphModule::getOutput, py::arg("index"))
      .def("time_runs", &timeRuns, py::arg("number"), py::arg("repeat"), py::arg("min_repeat_ms"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("num_inputs", [](const GraphModule& g) { return g.executor.numInputs(); })
      .def_property_readonly("num_outputs", [](const GraphModule& g) { return g.executor.numOutputs(); })
      .def("input_name", [](const GraphModule& g, int i) { return g.executor.inputName(i); })
      .def_property_readonly("device", [](const GraphModule& g) { return g.executor.device(); });
}

}  // namespace tessel::python
