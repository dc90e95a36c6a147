#include "tune/GpuCandidateBuild.h"

#include <nlohmann/json.hpp>

#include "codegen/GpuBuild.h"
#include "codegen/Nvrtc.h"
#include "passes/Lower.h"
#include "support/Clock.h"
#include "support/Error.h"
#include "support/JsonParse.h"
#include "tune/IsolatedCall.h"

namespace tessel::tune {

namespace {

using Clock = std::chrono::steady_clock;

/// What an isolated step that did not return becomes: a timeout, or `failure` with its message.
BuildResult failedStep(const IsolatedCallResult& step, MeasureErrorNo failure, const std::string& what, const MeasureTask& task,
                       Clock::time_point start) {
  using Status = IsolatedCallResult::Status;
  double seconds = secondsSince(start);
  if (step.status == Status::TimedOut)
    return buildErrorResult(MeasureErrorNo::BuildTimeoutError,
                            fmt::format("build timed out after {:.1f} s while {} for task '{}'", seconds, what, task.name), seconds);
  if (step.status == Status::Threw) return buildErrorResult(failure, step.output, seconds);
  return buildErrorResult(failure, fmt::format("{} for task '{}' crashed the build process: {}", what, task.name, step.describe()),
                          seconds);
}

}  // namespace

passes::GpuLimits gpuLimitsOfTask(const MeasureTask& task) {
  return task.gpuLimits ? *task.gpuLimits : passes::GpuLimits::forTarget(task.target);
}

BuildResult buildGpuCandidate(const MeasureInput& input, const std::string& kernelName, const std::string& directory,
                              std::chrono::milliseconds timeout) {
  auto start = Clock::now();
  auto deadline = start + timeout;
  const MeasureTask& task = *input.task;
  codegen::GpuDialect dialect;
  passes::GpuLimits limits;
  try {
    dialect = codegen::gpuDialectOfTarget(task.target);
    limits = gpuLimitsOfTask(task);
  } catch (const Error& e) {
    return buildErrorResult(MeasureErrorNo::InstantiationError, e.what(), secondsSince(start));
  }

  // 1. Replay, lower (with the verification against the limits) and generate, isolated.
  auto generated = runIsolated(
      [&] {
        auto lowered = passes::lowerForGpu(schedule::replay(task.dag, input.steps), kernelName, limits);
        codegen::GpuSource source = codegen::generateGpuSource({lowered}, dialect);
        return nlohmann::json{{"manifest", source.manifest}, {"code", source.code}}.dump();
      },
      timeout);
  if (generated.status != IsolatedCallResult::Status::Returned)
    return failedStep(generated, MeasureErrorNo::InstantiationError, "lowering for the GPU and generating code", task, start);
  double lowerSeconds = secondsSince(start);
  auto parts = parseJson(generated.output, "the GPU lowering process's answer");
  codegen::GpuBinary binary{{dialect, parts.at("code").get<std::string>(), parts.at("manifest")}, {}};

  // 2. CUDA: NVRTC, isolated as well (a compiler crash must not end the tuning).
  double compileSeconds = 0;
  if (dialect == codegen::GpuDialect::Cuda) {
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (remaining.count() <= 0)
      return buildErrorResult(MeasureErrorNo::BuildTimeoutError,
                              fmt::format("build timed out after {:.1f} s before NVRTC compiled task '{}'", secondsSince(start),
                                          task.name),
                              secondsSince(start));
    auto compileStart = Clock::now();
    // No cache: a candidate is compiled once, and thousands of them would only fill it.
    auto compiled = runIsolated([&] { return codegen::compileCudaToCubin(binary.source.code, task.target); }, remaining);
    if (compiled.status != IsolatedCallResult::Status::Returned)
      return failedStep(compiled, MeasureErrorNo::CompileDeviceError, "compiling with NVRTC", task, start);
    binary.code = std::move(compiled.output);
    compileSeconds = secondsSince(compileStart);
  } else {
    binary.code = binary.source.code;
  }
  try {
    codegen::saveGpuModule(binary, directory);
  } catch (const Error& e) {
    return buildErrorResult(MeasureErrorNo::UnknownError, fmt::format("builder: {}", e.what()), secondsSince(start));
  }
  BuildResult result;
  result.libraryPath = directory;
  result.gpuDevice = dialect == codegen::GpuDialect::Cuda ? "cuda" : "opencl";
  result.kernelName = kernelName;
  result.buildSeconds = secondsSince(start);
  result.lowerSeconds = lowerSeconds;
  result.compileSeconds = compileSeconds;
  return result;
}

}  // namespace tessel::tune
