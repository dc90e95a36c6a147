#include "rpc/worker/ModuleBenchmark.h"

#include <cstring>

#include "runtime/GraphExecutor.h"
#include "support/Error.h"
#include "tune/MeasureErrorNo.h"

namespace tessel::rpc::worker {

bool isModuleRequest(const nlohmann::json& request) { return request.is_object() && request.contains("module"); }

nlohmann::json benchmarkModule(const nlohmann::json& request) {
  nlohmann::json reply = {{"id", request.value("id", int64_t(-1))},
                          {"error_no", int(tune::MeasureErrorNo::NoError)},
                          {"message", ""},
                          {"costs", nlohmann::json::array()},
                          {"number", 0}};
  try {
    TESSEL_CHECK(request["module"].is_string(), "bad module request: 'module' must be a directory path");
    runtime::TimeEvaluatorOptions timing;
    timing.number = request.value("number", 1);
    timing.repeat = request.value("repeat", 1);
    timing.minRepeatMs = request.value("min_repeat_ms", 0.0);
    TESSEL_CHECK(timing.number >= 1 && timing.repeat >= 1 && timing.minRepeatMs >= 0,
                 "bad module request: number and repeat must be at least 1 and min_repeat_ms non-negative");
    // A GPU module runs on the server's device ("opencl:0"); the CPU's by default.
    runtime::GraphExecutorOptions options;
    options.device = runtime::Device::parse(request.value("device", std::string("cpu")));
    auto executor = runtime::GraphExecutor::load(request["module"].get<std::string>(), options);
    executor.setZeroInputs();
    auto result = executor.benchmark(timing);
    reply["costs"] = result.costs;
    reply["number"] = result.number;
  } catch (const std::exception& e) {
    reply["error_no"] = int(tune::MeasureErrorNo::RuntimeDeviceError);
    reply["message"] = e.what();
  }
  return reply;
}

}  // namespace tessel::rpc::worker
