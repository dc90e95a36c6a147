// tessel-vta-worker: the measurement worker of VTA candidates. It speaks the protocol of
// tessel-measure-worker (tune/worker/MeasureSession.h: one JSON request per line on stdin, one
// reply per line on stdout), but the "library" of a request is a VTA program file
// (vta/Program.h): it runs on a fresh simulator in the cycle model's order, and every one of
// the `repeat` costs is its modelled time, cycles / clock (the model is deterministic, so
// `number` calls take `number` times as long and the cost per call does not change). A local
// runner or a device server started with `--device vta` runs it.
#include <fmt/format.h>

#include "support/Error.h"
#include "tune/MeasureErrorNo.h"
#include "tune/worker/WorkerLoop.h"
#include "vta/Program.h"
#include "vta/Simulator.h"

namespace {

nlohmann::json measureProgram(const nlohmann::json& request) {
  using tessel::tune::MeasureErrorNo;
  nlohmann::json reply = {{"id", request.value("id", int64_t(-1))}, {"costs", nlohmann::json::array()}, {"number", 1}};
  try {
    const std::string path = request.at("library").get<std::string>();
    const int repeat = std::max(1, request.value("repeat", 1));
    tessel::vta::Program program = tessel::vta::Program::load(path);
    // A measurement needs the time only: the values of a candidate's zero-filled buffers are
    // not computed (the cycles are a full run's).
    tessel::vta::SimulatorOptions timeOnly;
    timeOnly.computeValues = false;
    tessel::vta::Simulator simulator(program.config, timeOnly);
    program.runOn(simulator);
    for (int r = 0; r < repeat; ++r) reply["costs"].push_back(simulator.lastRunSeconds());
    reply["number"] = request.value("number", 1);
    reply["error_no"] = int(MeasureErrorNo::NoError);
    reply["message"] = "";
    reply["cycles"] = simulator.lastRunCycles();
    reply["statistics"] = simulator.stats().toJson();
  } catch (const std::exception& e) {
    reply["error_no"] = int(MeasureErrorNo::RuntimeDeviceError);
    reply["message"] = fmt::format("VTA program: {}", e.what());
    reply["costs"] = nlohmann::json::array();
  }
  return reply;
}

}  // namespace

int main(int argc, char** argv) {
  tessel::tune::worker::WorkerLoopOptions options;
  options.programName = "tessel-vta-worker";
  options.description =
      "Measures VTA programs on the simulator: one JSON request per line on stdin (the program file as \"library\"), one JSON "
      "reply per line on stdout with the modelled time";
  options.readyExtras = {{"device", "vta"}};
  options.extraHandler = [](const nlohmann::json& request) -> std::optional<nlohmann::json> { return measureProgram(request); };
  return tessel::tune::worker::runWorkerLoop(argc, argv, options);
}
