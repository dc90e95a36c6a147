// The measurement worker's GPU side (MeasureSession::measureOnGpu): a candidate that is a GPU
// module is loaded on the request's device, its inputs (the same seeded values as a CPU
// candidate's, or its reference's) are copied there, it is optionally checked against the CPU
// reference, and it is timed by the device's own clock (CUDA events; on OpenCL the queue drained
// before each reading) under the CPU's TimeEvaluator semantics: warm-up, number, repeat,
// min_repeat_ms, the stop_above_s bound.
#include "runtime/CudaDevice.h"
#include "runtime/GpuModule.h"
#include "runtime/OpenclDevice.h"
#include "support/Error.h"
#include "support/Files.h"
#include "tune/worker/MeasureSession.h"

namespace tessel::tune::worker {

namespace {

runtime::SecondsClock deviceClock(const runtime::Device& device) {
  return device.kind == runtime::DeviceKind::CUDA ? runtime::cudaEventClock(device.id) : runtime::openclQueueClock(device.id);
}

}  // namespace

nlohmann::json MeasureSession::measureOnGpu(const nlohmann::json& request) {
  runtime::Device device = runtime::Device::parse(request.at("device").get<std::string>());
  TESSEL_CHECK(device.kind == runtime::DeviceKind::CUDA || device.kind == runtime::DeviceKind::OpenCL,
               "device '{}' is not a GPU (cuda or opencl)", device.str());
  std::string manifestPath = request.at("library").get<std::string>();
  std::string codePath = request.at("code").get<std::string>();
  std::string kernelName = request.at("kernel").get<std::string>();
  int numInputs = request.at("num_inputs").get<int>();
  uint64_t seed = request.value("seed", uint64_t(0));
  runtime::TimeEvaluatorOptions timing = timingOfRequest(request);
  // A cache flush or cold copies model the CPU's caches; a GPU candidate is timed warm.
  TESSEL_CHECK(!timing.flushCache && !request.value("cold", false),
               "flush_cache and cold apply to CPU kernels: a GPU candidate on {} is measured with warm device memory", device.str());

  runtime::GpuModule module;
  runtime::GpuKernel kernel;
  double loadStart = runtime::steadySeconds();
  try {
    module = runtime::GpuModule::fromMemory(readFile(manifestPath), readFile(codePath), device.id);
    kernel = module.kernel(kernelName);
  } catch (const runtime::DeviceCompileError& e) {
    throw CandidateFailure{MeasureErrorNo::CompileDeviceError, fmt::format("the compiler of {} rejected the candidate: {}", device.str(), e.what())};
  } catch (const Error& e) {
    throw CandidateFailure{MeasureErrorNo::RuntimeDeviceError, fmt::format("cannot load the candidate on {}: {}", device.str(), e.what())};
  }
  if (module.device().kind != device.kind)
    throw CandidateFailure{MeasureErrorNo::RuntimeDeviceError,
                           fmt::format("the candidate is a {} module; this worker measures on {}",
                                       runtime::deviceKindName(module.device().kind), device.str())};
  double loadSeconds = runtime::steadySeconds() - loadStart;
  const auto& specs = kernel.spec().args;
  if (numInputs < 0 || size_t(numInputs) > specs.size())
    fail("num_inputs {} is out of range for kernel '{}' with {} arguments", numInputs, kernelName, specs.size());

  const ReferenceRun* reference = nullptr;
  std::vector<runtime::Tensor> hostInputs;
  if (request.contains("reference")) {
    const auto& ref = request.at("reference");
    reference = &referenceRun(ref.at("library").get<std::string>(), ref.at("kernel").get<std::string>(), numInputs, seed);
    try {
      checkSameSignature(kernelName, specs, reference->module.kernel(ref.at("kernel").get<std::string>()));
    } catch (const Error& e) {
      throw CandidateFailure{MeasureErrorNo::UnknownError, e.what()};
    }
    hostInputs = reference->inputs;
  } else {
    for (int i = 0; i < numInputs; ++i) hostInputs.push_back(randomInput(specs[size_t(i)], seed + uint64_t(i)));
  }

  runtime::TimingResult timed;
  try {
    std::vector<runtime::Tensor> args;
    for (const auto& t : hostInputs) args.push_back(t.to(device));
    for (size_t i = hostInputs.size(); i < specs.size(); ++i) args.push_back(garbageTensor(specs[i]).to(device));
    if (reference) {
      kernel.call(args);
      runtime::deviceAPI(device).synchronize();
      std::vector<runtime::Tensor> outputs;
      for (size_t i = hostInputs.size(); i < args.size(); ++i) outputs.push_back(args[i].to(runtime::Device::cpu()));
      checkOutputs(outputs, reference->outputs, specs, numInputs, request.value("tolerance", 1e-4));
    }
    timed = runtime::timeFunction(kernel.bind(args), timing, deviceClock(device));
    runtime::deviceAPI(device).synchronize();
  } catch (const Error& e) {
    throw CandidateFailure{MeasureErrorNo::RuntimeDeviceError, fmt::format("on {}: {}", device.str(), e.what())};
  }
  return {{"error_no", 0}, {"message", ""}, {"costs", timed.costs}, {"number", timed.number}, {"load_seconds", loadSeconds}};
}

}  // namespace tessel::tune::worker
