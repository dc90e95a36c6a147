// Models: a zoo network (tessel.zoo.load, for relay.testing.*.get_workload) or an ONNX file
// (tessel.onnx.load, for relay.frontend.from_onnx).
#include <pybind11/stl.h>

#include "graph/ModelZoo.h"
#include "graph/frontends/Onnx.h"
#include "ops/Layout.h"
#include "python/Bindings.h"
#include "python/Model.h"

namespace py = pybind11;

namespace tessel::python {

namespace {

Model loadZoo(const std::string& name, int64_t batch, const std::string& layout, int64_t imageSize, int64_t sequence, int64_t layers) {
  graph::ModelOptions options;
  options.batch = batch;
  options.layout = ops::parseLayout(layout);
  options.imageSize = imageSize;
  options.sequence = sequence;
  options.layers = layers;
  return {graph::buildModel(name, options), name};
}

Model loadOnnx(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes) {
  graph::OnnxImportOptions options;
  options.inputShapes = shapes;
  return {graph::importOnnx(path, options), path};
}

/// The graph's inputs in order: name -> (shape, dtype name).
py::dict inputsOf(const Model& model) {
  py::dict inputs;
  for (int id : model.graph.inputIds()) {
    const graph::Node& node = model.graph.node(id);
    inputs[py::str(node.name)] = py::make_tuple(node.type.shape, node.type.dtype.str());
  }
  return inputs;
}

}  // namespace

void bindModels(py::module_& m) {
  py::class_<Model>(m, "Model", "a network as loaded: its graph with the parameters in place")
      .def_readonly("source", &Model::source, "the zoo name or the ONNX file it was loaded from")
      .def_property_readonly("inputs", &inputsOf, "the inputs in order: name -> (shape, dtype)")
      .def_property_readonly("num_params", [](const Model& model) { return model.graph.params().size(); })
      .def("__repr__", [](const Model& model) { return "<tessel.Model " + model.source + ">"; });
  m.def("load_zoo", &loadZoo, py::arg("name"), py::arg("batch") = 1, py::arg("layout") = "NCHW", py::arg("image_size") = 0,
        py::arg("sequence") = 0, py::arg("layers") = 0, py::call_guard<py::gil_scoped_release>());
  m.def("load_onnx", &loadOnnx, py::arg("path"), py::arg("shape_dict") = std::map<std::string, std::vector<int64_t>>{},
        py::call_guard<py::gil_scoped_release>());
}

}  // namespace tessel::python
