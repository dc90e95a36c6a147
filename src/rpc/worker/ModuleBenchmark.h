/// The device worker's second kind of request: time a whole compiled module (a `tessel
/// compile` directory: graph.json, kernels.so, params.bin) as `tessel benchmark` does, for
/// `tessel benchmark DIR --runner rpc`. Runtime-only, like the rest of the worker.
///   request: {"id": 3, "module": "/tmp/.../session", "number": 1, "repeat": 10, "min_repeat_ms": 100}
///   reply:   {"id": 3, "error_no": 0, "message": "", "costs": [...], "number": 1}
///            (error_no 4 when the module cannot be loaded or run, with the runtime's message)
#pragma once
#include <nlohmann/json.hpp>

namespace tessel::rpc::worker {

/// Whether a request line asks for a module benchmark (it has "module").
bool isModuleRequest(const nlohmann::json& request);
/// Loads the module, zeroes its inputs and times run(); never throws (errors become replies).
nlohmann::json benchmarkModule(const nlohmann::json& request);

}  // namespace tessel::rpc::worker
