#include "tune/worker/MeasureSession.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstring>
#include <limits>
#include <random>

#include "target/HostCpu.h"
#include "runtime/MachineLoad.h"
#include "runtime/Threading.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"
#include "tune/MeasureErrorNo.h"

namespace tessel::tune::worker {

namespace {

constexpr size_t kReferencesKept = 4;

/// An element of a CPU tensor as a double (float16 is not supported).
double readElement(const runtime::Tensor& t, int64_t i) {
  const void* p = t.data();
  DataType d = t.dtype();
  switch (d.code) {
    case DataType::Code::Float:
      if (d.bits == 32) return static_cast<const float*>(p)[i];
      if (d.bits == 64) return static_cast<const double*>(p)[i];
      break;
    case DataType::Code::Int:
      if (d.bits == 8) return static_cast<const int8_t*>(p)[i];
      if (d.bits == 16) return static_cast<const int16_t*>(p)[i];
      if (d.bits == 32) return static_cast<const int32_t*>(p)[i];
      if (d.bits == 64) return double(static_cast<const int64_t*>(p)[i]);
      break;
    case DataType::Code::UInt:
      if (d.bits == 8) return static_cast<const uint8_t*>(p)[i];
      if (d.bits == 16) return static_cast<const uint16_t*>(p)[i];
      if (d.bits == 32) return static_cast<const uint32_t*>(p)[i];
      if (d.bits == 64) return double(static_cast<const uint64_t*>(p)[i]);
      break;
    case DataType::Code::Bool: return static_cast<const uint8_t*>(p)[i] != 0;
    default: break;
  }
  fail("measurement worker: tensors of dtype {} are not supported", d.str());
}

void writeElement(runtime::Tensor& t, int64_t i, double v) {
  void* p = t.data();
  DataType d = t.dtype();
  switch (d.code) {
    case DataType::Code::Float:
      if (d.bits == 32) return void(static_cast<float*>(p)[i] = float(v));
      if (d.bits == 64) return void(static_cast<double*>(p)[i] = v);
      break;
    case DataType::Code::Int:
      if (d.bits == 8) return void(static_cast<int8_t*>(p)[i] = int8_t(v));
      if (d.bits == 16) return void(static_cast<int16_t*>(p)[i] = int16_t(v));
      if (d.bits == 32) return void(static_cast<int32_t*>(p)[i] = int32_t(v));
      if (d.bits == 64) return void(static_cast<int64_t*>(p)[i] = int64_t(v));
      break;
    case DataType::Code::UInt:
      if (d.bits == 8) return void(static_cast<uint8_t*>(p)[i] = uint8_t(v));
      if (d.bits == 16) return void(static_cast<uint16_t*>(p)[i] = uint16_t(v));
      if (d.bits == 32) return void(static_cast<uint32_t*>(p)[i] = uint32_t(v));
      if (d.bits == 64) return void(static_cast<uint64_t*>(p)[i] = uint64_t(v));
      break;
    case DataType::Code::Bool: return void(static_cast<uint8_t*>(p)[i] = v != 0);
    default: break;
  }
  fail("measurement worker: tensors of dtype {} are not supported", d.str());
}

runtime::Tensor allocate(const runtime::ArgSpec& spec) {
  for (int64_t extent : spec.shape)
    TESSEL_CHECK(extent >= 0, "argument '{}' has shape {} with an open extent: a measured kernel needs fixed shapes",
                 spec.name, runtime::formatShape(spec.shape));
  return runtime::Tensor::empty(spec.shape, spec.dtype);
}


std::vector<runtime::Tensor> callWithOutputs(const runtime::Kernel& kernel, const std::vector<runtime::Tensor>& inputs,
                                             std::vector<runtime::Tensor>* outputs) {
  const auto& specs = kernel.argSpecs();
  std::vector<runtime::Tensor> args = inputs;
  outputs->clear();
  for (size_t i = inputs.size(); i < specs.size(); ++i) {
    outputs->push_back(garbageTensor(specs[i]));
    args.push_back(outputs->back());
  }
  kernel.call(args);
  return args;
}

}  // namespace

void checkSameSignature(const std::string& candidate, const std::vector<runtime::ArgSpec>& a, const runtime::Kernel& reference) {
  const auto& b = reference.argSpecs();
  TESSEL_CHECK(a.size() == b.size(), "kernel '{}' has {} arguments but its reference '{}' has {}", candidate, a.size(),
               reference.name(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    TESSEL_CHECK(a[i].dtype == b[i].dtype && a[i].shape == b[i].shape,
                 "kernel '{}', argument {} ('{}'): {} {} differs from the reference's {} {}", candidate, i + 1, a[i].name,
                 a[i].dtype.str(), runtime::formatShape(a[i].shape), b[i].dtype.str(), runtime::formatShape(b[i].shape));
}

void checkOutputs(const std::vector<runtime::Tensor>& outputs, const std::vector<runtime::Tensor>& expected,
                  const std::vector<runtime::ArgSpec>& specs, int numInputs, double tolerance) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    auto c = compareOutputs(outputs[o], expected[o]);
    bool floating = outputs[o].dtype().isFloat();
    bool wrong = floating ? !(c.maxError <= tolerance) : c.maxError != 0;
    if (wrong) {
      const auto& spec = specs[size_t(numInputs) + o];
      throw CandidateFailure{
          MeasureErrorNo::WrongAnswerError,
          fmt::format("wrong answer: output '{}' element {} of {}: got {}, expected {} ({} error {:.3g}{})", spec.name,
                      c.worstIndex, outputs[o].numel(), c.got, c.expected, floating ? "relative" : "absolute", c.maxError,
                      floating ? fmt::format(", tolerance {:.3g}", tolerance) : std::string())};
    }
  }
}

runtime::TimeEvaluatorOptions timingOfRequest(const nlohmann::json& request) {
  runtime::TimeEvaluatorOptions timing;
  timing.number = request.value("number", 1);
  timing.repeat = request.value("repeat", 1);
  timing.minRepeatMs = request.value("min_repeat_ms", 0.0);
  timing.flushCache = request.value("flush_cache", false);
  timing.stopAboveSeconds = request.value("stop_above_s", 0.0);
  return timing;
}

runtime::Tensor garbageTensor(const runtime::ArgSpec& spec) {
  auto t = allocate(spec);
  std::memset(t.data(), 0xff, t.nbytes());
  return t;
}

runtime::Tensor randomTensor(const runtime::ArgSpec& spec, uint64_t seed) {
  auto t = allocate(spec);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(0.0, 1.0);
  std::uniform_int_distribution<int> integer(-8, 8);
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    double v;
    if (spec.dtype.isFloat()) v = real(rng);
    else if (spec.dtype.isBool()) v = double(rng() & 1);
    else v = integer(rng);
    if (spec.dtype.isUInt()) v = std::fabs(v);
    writeElement(t, i, v);
  }
  return t;
}

OutputComparison compareOutputs(const runtime::Tensor& got, const runtime::Tensor& expected) {
  OutputComparison result;
  int64_t n = expected.numel();
  bool floating = expected.dtype().isFloat();
  double floor = 0;
  if (floating) {
    double scale = 0;
    for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(readElement(expected, i)));
    // As the fuzzer measures it: relative to each element, but never to less than 1e-3 of the
    // largest magnitude, so that cancellation near zero does not count as an error.
    floor = std::max(scale * 1e-3, 1e-30);
  }
  for (int64_t i = 0; i < n; ++i) {
    double g = readElement(got, i), e = readElement(expected, i);
    double error;
    if (!floating) error = std::fabs(g - e);
    else if (std::isnan(g) || std::isnan(e)) error = std::isnan(g) && std::isnan(e) ? 0 : std::numeric_limits<double>::infinity();
    else error = std::fabs(g - e) / std::max(std::fabs(e), floor);
    if (result.worstIndex < 0 || error > result.maxError) {
      result.maxError = error;
      result.worstIndex = i;
      result.got = g;
      result.expected = e;
    }
  }
  return result;
}

const MeasureSession::ReferenceRun& MeasureSession::referenceRun(const std::string& library, const std::string& kernel,
                                                                  int numInputs, uint64_t seed) {
  std::string key = fmt::format("{}\n{}\n{}\n{}", library, kernel, numInputs, seed);
  for (auto it = references_.begin(); it != references_.end(); ++it)
    if (it->key == key) {
      if (it != references_.begin()) {
        ReferenceRun found = std::move(*it);
        references_.erase(it);
        references_.push_front(std::move(found));
      }
      return references_.front();
    }
  ReferenceRun run;
  run.key = key;
  try {
    run.module = runtime::Module::load(library);
    auto k = run.module.kernel(kernel);
    const auto& specs = k.argSpecs();
    TESSEL_CHECK(numInputs >= 0 && size_t(numInputs) <= specs.size(), "num_inputs {} is out of range for {} arguments",
                 numInputs, specs.size());
    for (int i = 0; i < numInputs; ++i) run.inputs.push_back(randomTensor(specs[size_t(i)], seed + uint64_t(i)));
    callWithOutputs(k, run.inputs, &run.outputs);
  } catch (const Error& e) {
    throw CandidateFailure{MeasureErrorNo::UnknownError, fmt::format("the reference kernel failed: {}", e.what())};
  }
  references_.push_front(std::move(run));
  if (references_.size() > kReferencesKept) references_.pop_back();
  return references_.front();
}

runtime::Tensor MeasureSession::randomInput(const runtime::ArgSpec& spec, uint64_t seed) {
  constexpr size_t kInputsKept = 16;
  std::string key = fmt::format("{} {} {}", spec.dtype.str(), runtime::formatShape(spec.shape), seed);
  for (auto it = inputs_.begin(); it != inputs_.end(); ++it)
    if (it->key == key) {
      runtime::Tensor copy = it->tensor.clone();  // a kernel that writes its inputs spoils only its own copy
      if (it != inputs_.begin()) {
        CachedInput found = std::move(*it);
        inputs_.erase(it);
        inputs_.push_front(std::move(found));
      }
      return copy;
    }
  runtime::Tensor fresh = randomTensor(spec, seed);
  inputs_.push_front({key, fresh.clone()});
  if (inputs_.size() > kInputsKept) inputs_.pop_back();
  return fresh;
}

const std::vector<std::vector<runtime::Tensor>>& MeasureSession::coldCopies(const std::vector<runtime::Tensor>& args,
                                                                            uint64_t seed) {
  std::string key = fmt::format("{}", seed);
  for (const auto& t : args) key += fmt::format(" {}{}", t.dtype().str(), runtime::formatShape(t.shape()));
  if (cold_.key == key) return cold_.sets;
  // Cold caches as a network meets them: each call gets its own copy of every argument, in
  // rotation through copies that together are twice the last-level cache, so what a call
  // reads was evicted since its copy's last turn (a flush before each call would time the
  // flush's own traffic too).
  size_t bytes = 0;
  for (const auto& t : args) bytes += t.nbytes();
  size_t copies = std::clamp<size_t>((2 * size_t(target::hostCpu().llcBytes) + bytes - 1) / std::max<size_t>(bytes, 1), 2, 64);
  while (copies > 2 && copies * bytes > (size_t(1) << 30)) --copies;
  cold_ = {};  // the last task's copies go before this one's are made
  for (size_t c = 1; c < copies; ++c) {
    std::vector<runtime::Tensor> copy;
    for (const auto& t : args) copy.push_back(t.clone());
    cold_.sets.push_back(std::move(copy));
  }
  cold_.key = key;
  return cold_.sets;
}

nlohmann::json MeasureSession::measure(const nlohmann::json& request) {
  if (request.contains("device")) return measureOnGpu(request);
  std::string library = request.at("library").get<std::string>();
  std::string kernelName = request.at("kernel").get<std::string>();
  int numInputs = request.at("num_inputs").get<int>();
  uint64_t seed = request.value("seed", uint64_t(0));
  runtime::TimeEvaluatorOptions timing = timingOfRequest(request);

  runtime::Module module;
  runtime::Kernel kernel;
  double loadStart = runtime::steadySeconds();
  try {
    module = runtime::Module::load(library);
    kernel = module.kernel(kernelName);
  } catch (const Error& e) {
    throw CandidateFailure{MeasureErrorNo::RuntimeDeviceError, fmt::format("cannot load the candidate: {}", e.what())};
  }
  double loadSeconds = runtime::steadySeconds() - loadStart;
  const auto& specs = kernel.argSpecs();
  if (numInputs < 0 || size_t(numInputs) > specs.size())
    fail("num_inputs {} is out of range for kernel '{}' with {} arguments", numInputs, kernelName, specs.size());

  std::vector<runtime::Tensor> inputs;
  if (request.contains("reference")) {
    const auto& ref = request.at("reference");
    const ReferenceRun& reference = referenceRun(ref.at("library").get<std::string>(), ref.at("kernel").get<std::string>(),
                                                 numInputs, seed);
    try {
      checkSameSignature(kernel.name(), specs, reference.module.kernel(ref.at("kernel").get<std::string>()));
    } catch (const Error& e) {
      throw CandidateFailure{MeasureErrorNo::UnknownError, e.what()};
    }
    // The candidate gets copies: a kernel that writes into its inputs must not spoil the reference's.
    for (const auto& t : reference.inputs) inputs.push_back(t.clone());
    std::vector<runtime::Tensor> outputs;
    try {
      callWithOutputs(kernel, inputs, &outputs);
    } catch (const Error& e) {
      throw CandidateFailure{MeasureErrorNo::RuntimeDeviceError, e.what()};
    }
    checkOutputs(outputs, reference.outputs, specs, numInputs, request.value("tolerance", 1e-4));
  } else {
    for (int i = 0; i < numInputs; ++i) inputs.push_back(randomInput(specs[size_t(i)], seed + uint64_t(i)));
  }

  std::vector<runtime::Tensor> args = inputs;
  for (size_t i = inputs.size(); i < specs.size(); ++i) args.push_back(garbageTensor(specs[i]));
  std::vector<std::function<void()>> calls{kernel.bind(args)};
  if (request.value("cold", false))
    for (const auto& copy : coldCopies(args, seed)) calls.push_back(kernel.bind(copy));
  size_t turn = 0;
  auto call = calls.size() == 1 ? calls[0] : std::function<void()>([&] { calls[turn++ % calls.size()](); });
  runtime::TimingResult timed;
  try {
    timed = runtime::timeFunction(call, timing);
  } catch (const Error& e) {
    throw CandidateFailure{MeasureErrorNo::RuntimeDeviceError, e.what()};
  }
  return {{"error_no", 0}, {"message", ""}, {"costs", timed.costs}, {"number", timed.number}, {"load_seconds", loadSeconds}};
}

nlohmann::json MeasureSession::handle(const nlohmann::json& request) {
  nlohmann::json reply;
  try {
    // The machine's state, as the kernels see it: the probe on this worker's kernel threads.
    if (request.is_object() && request.value("probe", false))
      reply = {{"error_no", 0}, {"probe_seconds", runtime::probeKernelThreads()}, {"threads", runtime::kernelThreadCount()}};
    else reply = measure(request);
  } catch (const CandidateFailure& f) {
    reply = {{"error_no", int(f.errorNo)}, {"message", f.message}, {"costs", nlohmann::json::array()}};
  } catch (const std::exception& e) {
    reply = {{"error_no", int(MeasureErrorNo::UnknownError)},
             {"message", fmt::format("bad measurement request: {}", e.what())},
             {"costs", nlohmann::json::array()}};
  }
  reply["id"] = request.is_object() ? request.value("id", int64_t(-1)) : int64_t(-1);
  return reply;
}

}  // namespace tessel::tune::worker
