// tessel-device-worker: the measurement worker of a device server. It speaks the protocol of
// tessel-measure-worker (tune/worker/MeasureSession.h: one JSON request per line on stdin, one
// reply per line on stdout) and also times whole modules (ModuleBenchmark.h). Runtime-only,
// so that it cross-compiles for boards. A crash or hang takes only this process down.
#include "rpc/worker/ModuleBenchmark.h"
#include "tune/worker/WorkerLoop.h"

int main(int argc, char** argv) {
  tessel::tune::worker::WorkerLoopOptions options;
  options.programName = "tessel-device-worker";
  options.description = "Measures tessel kernels and modules for a device server: one JSON request per line on stdin, one JSON reply per line on stdout";
  options.readyExtras = {{"modules", true}};
  options.extraHandler = [](const nlohmann::json& request) -> std::optional<nlohmann::json> {
    if (!tessel::rpc::worker::isModuleRequest(request)) return std::nullopt;
    return tessel::rpc::worker::benchmarkModule(request);
  };
  return tessel::tune::worker::runWorkerLoop(argc, argv, options);
}
