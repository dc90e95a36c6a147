/// The main loop every measurement worker process runs (tessel-measure-worker for the local
/// runner, tessel-device-worker for a device server): replies go out on a private copy of
/// stdout while stdout itself is redirected to stderr (a kernel that prints cannot corrupt the
/// protocol), the process leaves when its parent dies (even mid-kernel), announces itself with
/// a ready line, then answers one JSON request per line until its input closes.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tessel::tune::worker {

struct WorkerLoopOptions {
  std::string programName;              ///< for messages: "tessel-measure-worker"
  std::string description;              ///< the usage line after the program's name
  nlohmann::json readyExtras = nlohmann::json::object();  ///< fields added to the ready line
  /// Requests this worker answers itself before the measure session sees them; nullopt: not one.
  std::function<std::optional<nlohmann::json>(const nlohmann::json& request)> extraHandler;
};

/// Runs the worker; returns main's exit code.
int runWorkerLoop(int argc, char** argv, const WorkerLoopOptions& options);

}  // namespace tessel::tune::worker
