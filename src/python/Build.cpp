// tessel.build (relay.build), Module.export (export_library) and tessel.runtime.load_module,
// through the driver's build for CPU and GPU targets (driver/BuildNetwork.h) and its module output
// (driver/ModuleOutput.h: a directory written whole, an existing module replaced, anything else refused).
#include <pybind11/stl.h>

#include <filesystem>

#include "driver/BuildNetwork.h"
#include "driver/ModuleOutput.h"
#include "python/Bindings.h"
#include "python/Model.h"
#include "python/Module.h"
#include "runtime/GraphExecutor.h"
#include "support/Error.h"

namespace py = pybind11;

namespace tessel::python {

namespace {

/// The GPU options (targetHost, channelTile, reductionParts) as `tessel compile` spells them: the
/// driver checks them with the CLI's messages.
Module build(const Model& model, const std::string& target, const std::string& records, bool shippedRecords,
             const std::string& targetHost, const std::string& channelTile, const std::string& reductionParts) {
  driver::BuildNetworkOptions options;
  options.prepare.target = target::Target::parse(target);
  options.prepare.desiredLayout = driver::defaultDesiredLayout(options.prepare.target);
  options.records = records;
  options.shippedRecords = shippedRecords;
  options.targetHost = targetHost;
  options.channelTile = channelTile;
  options.reductionParts = reductionParts;
  options.model = model.graph;
  Module module;
  module.scratch = std::make_shared<TempDir>("tessel-python-build");
  module.directory = module.scratch->path() + "/module";
  options.output = module.directory;
  driver::BuildNetworkResult built = driver::buildNetwork(options);
  module.lines = built.lines;
  for (const std::string& warning : built.warnings) module.lines.push_back("warning: " + warning);
  module.functions = built.report.functions;
  module.distinctKernels = built.report.distinctKernels;
  return module;
}

/// A copy of the module's directory at `path`, written whole as `tessel compile -o` writes one.
void exportModule(const Module& module, const std::string& path) {
  driver::checkModuleOutput(path);
  driver::writeModule(path, [&](const std::string& staging) {
    std::filesystem::copy(module.directory, staging, std::filesystem::copy_options::recursive);
  });
}

Module loadModule(const std::string& directory) {
  TESSEL_CHECK(std::filesystem::is_regular_file(std::filesystem::path(directory) / runtime::kGraphPlanFile),
               "{}: not a module directory (it has no {}; tessel.build(...).export or tessel compile -o writes one)", directory,
               runtime::kGraphPlanFile);
  return Module{directory, nullptr, {}, 0, 0};
}

}  // namespace

void bindBuild(py::module_& m) {
  py::class_<Module>(m, "Module", "a compiled module: a directory with the kernels, the graph plan and the parameters")
      .def_readonly("directory", &Module::directory)
      .def_readonly("lines", &Module::lines, "what the build applied (records, shipped records, default schedules)")
      .def_readonly("functions", &Module::functions)
      .def_readonly("distinct_kernels", &Module::distinctKernels)
      .def("export", &exportModule, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
           "writes the module to the directory `path` (new, empty or a module, which is replaced whole)")
      .def("__repr__", [](const Module& module) { return "<tessel.Module " + module.directory + ">"; });
  m.def("build", &build, py::arg("model"), py::arg("target"), py::arg("records") = "", py::arg("shipped_records") = true,
        py::arg("target_host") = "cpu", py::arg("channel_tile") = "auto", py::arg("reduction_parts") = "auto",
        py::call_guard<py::gil_scoped_release>());
  m.def("load_module", &loadModule, py::arg("directory"));
}

}  // namespace tessel::python
