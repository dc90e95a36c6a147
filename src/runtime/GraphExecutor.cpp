#include "runtime/GraphExecutor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Json.h"
#include "support/MemoryBudgets.h"
#include "support/TempDir.h"

namespace tessel::runtime {

namespace {

/// Far above any real network's extent, so that a corrupt number is an error, not an extent that
/// wraps a byte count around.
constexpr int64_t kMaxExtent = int64_t(1) << 32;

}  // namespace

void checkPlanBufferBytes(const std::string& where, int64_t bytes) {
  TESSEL_CHECK(bytes >= 0 && bytes <= budgets::kActivationBufferBytes, "{}: {} is more than one activation buffer may have ({})", where,
               budgets::byteCount(uint64_t(bytes)), budgets::byteCount(uint64_t(budgets::kActivationBufferBytes)));
}

int64_t planTensorBytes(const std::string& where, DataType dtype, const std::vector<int64_t>& shape) {
  for (int64_t extent : shape)
    TESSEL_CHECK(extent >= 0 && extent <= kMaxExtent, "{}: shape {} has an extent out of range [0, {}]", where, formatShape(shape),
                 kMaxExtent);
  std::vector<int64_t> factors = shape;
  factors.push_back(int64_t(dtype.storageBytes()));
  auto bytes = budgets::productWithin(factors, budgets::kActivationBufferBytes);
  if (!bytes) {
    // The product may not fit 64 bits: say it in floating point.
    double approximate = double(dtype.storageBytes());
    for (int64_t extent : shape) approximate *= double(extent);
    fail("{}: {} {} is about {:.3g} bytes, more than one activation buffer may have ({})", where, dtype.str(), formatShape(shape),
         approximate, budgets::byteCount(uint64_t(budgets::kActivationBufferBytes)));
  }
  return *bytes;
}

struct GraphExecutor::Plan {
  nlohmann::json json;
};

GraphExecutor GraphExecutor::load(const std::string& directory, const GraphExecutorOptions& options) {
  std::string planPath = directory + "/" + kGraphPlanFile;
  Plan parsed{parseJson(readFile(planPath, file_kinds::kGraphPlan), planPath)};
  const nlohmann::json& plan = parsed.json;
  std::string built = plan.is_object() && plan.contains("device") && plan["device"].is_string() ? plan["device"].get<std::string>() : "cpu";
  std::string wanted = deviceKindName(options.device.kind);
  TESSEL_CHECK(built == wanted, "{}: the module was built for {} devices, not {} (compile it with --target {}, or run it with --device {})",
               directory, built, options.device.str(), wanted == "cpu" ? "cpu" : wanted, built);
  if (built == "cpu") {
    Module module = Module::load(directory + "/kernels.so");
    return GraphExecutor(module, parsed, loadParams(directory + "/params.bin"), planPath);
  }
  GpuModule module = GpuModule::load(directory, options.device.id);
  return GraphExecutor(module, parsed, loadParams(directory + "/params.bin"), planPath, options.cudaGraph);
}

GraphExecutor::GraphExecutor(GpuModule kernels, const Plan& plan, const NamedTensors& params, const std::string& origin,
                             bool cudaGraph)
    : device_(kernels.device()), gpuModule_(std::move(kernels)) {
  cudaGraphWanted_ = cudaGraph && device_.kind == DeviceKind::CUDA;
  loadPlan(plan, params, origin);
}

void GraphExecutor::loadPlan(const Plan& plan, const NamedTensors& params, const std::string& origin) {
  try {
    loadPlan(plan, params);
  } catch (const Error& e) {
    throw e.withContext(origin);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed plan: {}", origin, e.what());
  }
}

GraphExecutor GraphExecutor::fromPlanText(Module kernels, std::string_view planText, const NamedTensors& params, const std::string& origin) {
  return GraphExecutor(std::move(kernels), Plan{parseJson(planText, origin)}, params, origin);
}

GraphExecutor::GraphExecutor(Module kernels, const Plan& plan, const NamedTensors& params,
                             const std::string& origin)
    : module_(std::move(kernels)) {
  loadPlan(plan, params, origin);
}

void GraphExecutor::loadPlan(const Plan& parsed, const NamedTensors& params) {
  const nlohmann::json& plan = parsed.json;
  TESSEL_CHECK(plan.is_object() && plan.value("format", "") == "tessel.graph_executor", "not a tessel graph executor plan");
  int64_t version = jsonInteger(jsonMember(plan, "", "version"), "version");
  TESSEL_CHECK(version == 1, "plan version {} is not supported (this runtime reads version 1)", version);

  std::vector<int64_t> storageBytes =
      jsonIntegers(jsonMember(plan, "", "storages"), "storages", 0, std::numeric_limits<int64_t>::max());
  // Every size is checked before the first buffer is allocated.
  for (size_t i = 0; i < storageBytes.size(); ++i) checkPlanBufferBytes(fmt::format("storages[{}]", i), storageBytes[i]);
  for (size_t i = 0; i < storageBytes.size(); ++i) {
    size_t n = size_t(std::max<int64_t>(storageBytes[i], 1));
    try {
      storages_.push_back(Tensor::empty({int64_t(n)}, DataType::uint8(), device_));
    } catch (const std::bad_alloc&) {
      fail("storages[{}]: cannot allocate {} bytes", i, n);
    }
    if (device_.kind == DeviceKind::CPU) {
      std::memset(storages_.back().data(), 0, n);
    } else {
      std::vector<uint8_t> zeros(n, 0);
      storages_.back().copyFromHost(zeros.data(), n);
    }
  }

  const nlohmann::json& tensors = jsonMember(plan, "", "tensors");
  TESSEL_CHECK(tensors.is_array(), "tensors: expected an array");
  std::vector<int> storageOfTensor;  // -1 for a parameter
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    std::string where = fmt::format("tensors[{}]", i);
    TensorEntry e;
    e.name = jsonString(jsonMember(t, where, "name"), where + ".name");
    where = fmt::format("tensor '{}'", e.name);
    try {
      e.dtype = DataType::parse(jsonString(jsonMember(t, where, "dtype"), where + ".dtype"));
    } catch (const Error& error) {
      throw error.withContext(where);
    }
    e.shape = jsonIntegers(jsonMember(t, where, "shape"), where + ".shape", 0, kMaxExtent);
    int64_t bytes = planTensorBytes(where, e.dtype, e.shape);
    TESSEL_CHECK(t.contains("param") != t.contains("storage"), "{}: needs exactly one of 'param' and 'storage'", where);
    if (t.contains("param")) {
      std::string p = jsonString(t.at("param"), where + ".param");
      auto it = params.find(p);
      TESSEL_CHECK(it != params.end(), "tensor '{}' needs parameter '{}', which the parameters lack", e.name, p);
      TESSEL_CHECK(it->second.dtype() == e.dtype && it->second.shape() == e.shape, "parameter '{}' is {} {}, the plan expects {} {}", p,
                   it->second.dtype().str(), formatShape(it->second.shape()), e.dtype.str(), formatShape(e.shape));
      e.storage = it->second.to(device_);  // uploaded once, here
      storageOfTensor.push_back(-1);
    } else {
      int64_t s = jsonInteger(t.at("storage"), where + ".storage");
      TESSEL_CHECK(s >= 0 && s < int64_t(storages_.size()), "tensor '{}': storage {} does not exist", e.name, s);
      TESSEL_CHECK(int64_t(storages_[size_t(s)].nbytes()) >= bytes, "tensor '{}' needs {} bytes, storage {} has {}", e.name, bytes, s,
                   storages_[size_t(s)].nbytes());
      e.storage = storages_[size_t(s)];
      storageOfTensor.push_back(int(s));
      unplannedBytes_ += size_t(bytes);
    }
    tensors_.push_back(std::move(e));
  }
  auto tensorId = [&](const nlohmann::json& j, const std::string& what) {
    return int(jsonInteger(j, what, 0, int64_t(tensors_.size()) - 1));
  };
  const nlohmann::json& inputs = jsonMember(plan, "", "inputs");
  TESSEL_CHECK(inputs.is_array(), "inputs: expected an array");
  for (size_t i = 0; i < inputs.size(); ++i) inputs_.push_back(tensorId(inputs[i], fmt::format("inputs[{}]", i)));
  const nlohmann::json& outputs = jsonMember(plan, "", "outputs");
  TESSEL_CHECK(outputs.is_array(), "outputs: expected an array");
  for (size_t i = 0; i < outputs.size(); ++i) outputs_.push_back(tensorId(outputs[i], fmt::format("outputs[{}]", i)));

  // Values must be defined before they are used. A storage holds one value at a time: the
  // value last written there; reading any other tensor of that storage reads garbage.
  std::vector<int> occupant(storages_.size(), -1);  // tensor whose value a storage holds now
  std::vector<int> writer(tensors_.size(), -1);      // call that wrote a tensor (-1: none yet)
  std::vector<int> overwrittenBy(tensors_.size(), -1);
  auto place = [&](int tensor, int call) {
    int s = storageOfTensor[size_t(tensor)];
    if (occupant[size_t(s)] >= 0 && occupant[size_t(s)] != tensor) overwrittenBy[size_t(occupant[size_t(s)])] = call;
    occupant[size_t(s)] = tensor;
    overwrittenBy[size_t(tensor)] = -1;
  };
  for (int in : inputs_) {
    const TensorEntry& t = tensors_[size_t(in)];
    TESSEL_CHECK(storageOfTensor[size_t(in)] >= 0, "input '{}' is a parameter, not a value the caller sets", t.name);
    TESSEL_CHECK(occupant[size_t(storageOfTensor[size_t(in)])] < 0, "input '{}' shares storage {} with input '{}'", t.name,
                 storageOfTensor[size_t(in)], tensors_[size_t(occupant[size_t(storageOfTensor[size_t(in)])])].name);
    place(in, -1);
  }
  std::vector<bool> isInput(tensors_.size(), false);
  for (int in : inputs_) isInput[size_t(in)] = true;

  const nlohmann::json& calls = jsonMember(plan, "", "calls");
  TESSEL_CHECK(calls.is_array(), "calls: expected an array");
  for (size_t c = 0; c < calls.size(); ++c) {
    const auto& entry = calls[c];
    std::string where = fmt::format("calls[{}]", c);
    Call call;
    call.name = jsonString(jsonMember(entry, where, "kernel"), where + ".kernel");
    where = fmt::format("call {} ({})", c + 1, call.name);
    try {
      if (gpuModule_) {
        call.gpuKernel = gpuModule_->kernel(call.name);
        call.gpu = true;
      } else {
        call.kernel = module_.kernel(call.name);
      }
    } catch (const Error& error) {
      throw error.withContext(where);
    }
    const KernelSpec& kernelSpec = call.gpu ? call.gpuKernel.spec() : call.kernel.spec();
    const nlohmann::json& args = jsonMember(entry, where, "args");
    TESSEL_CHECK(args.is_array(), "{}: 'args' must be an array", where);
    std::vector<int> ids;
    for (size_t a = 0; a < args.size(); ++a) ids.push_back(tensorId(args[a], fmt::format("{}, args[{}]", where, a)));
    const auto& specs = kernelSpec.args;
    TESSEL_CHECK(ids.size() == specs.size(), "{} passes {} arguments, the kernel takes {}", where, ids.size(), specs.size());
    for (size_t a = 0; a < ids.size(); ++a) {
      const ArgSpec& spec = specs[a];
      const TensorEntry& t = tensors_[size_t(ids[a])];
      bool shapeOk = t.shape.size() == spec.shape.size();
      for (size_t k = 0; shapeOk && k < t.shape.size(); ++k) shapeOk = spec.shape[k] == -1 || spec.shape[k] == t.shape[k];
      TESSEL_CHECK(shapeOk && t.dtype == spec.dtype, "{}, argument '{}': the plan gives {} {}, the kernel expects {} {}", where, spec.name,
                   t.dtype.str(), formatShape(t.shape), spec.dtype.str(), formatShape(spec.shape));
      call.args.push_back(descriptor(t));
    }
    // Modules written before kernels declared their outputs have one, the last argument.
    size_t numOutputs = kernelSpec.numOutputs >= 0 ? size_t(kernelSpec.numOutputs) : std::min<size_t>(1, ids.size());
    size_t firstOutput = ids.size() - numOutputs;
    for (size_t a = 0; a < firstOutput; ++a) {
      int id = ids[a];
      const TensorEntry& t = tensors_[size_t(id)];
      int s = storageOfTensor[size_t(id)];
      if (s < 0) continue;  // a parameter
      TESSEL_CHECK(isInput[size_t(id)] || writer[size_t(id)] >= 0, "{} reads '{}' before any call computes it", where, t.name);
      if (overwrittenBy[size_t(id)] >= 0 || occupant[size_t(s)] != id) {
        int by = overwrittenBy[size_t(id)];
        fail("{} reads '{}', but {} overwrote its storage {} with '{}' first", where, t.name,
             by >= 0 ? fmt::format("call {}", by + 1) : std::string("a later value"), s,
             occupant[size_t(s)] >= 0 ? tensors_[size_t(occupant[size_t(s)])].name : "?");
      }
    }
    for (size_t a = firstOutput; a < ids.size(); ++a) {
      int id = ids[a];
      const TensorEntry& t = tensors_[size_t(id)];
      int s = storageOfTensor[size_t(id)];
      TESSEL_CHECK(s >= 0, "{} writes parameter '{}'", where, t.name);
      TESSEL_CHECK(!isInput[size_t(id)], "{} writes graph input '{}'", where, t.name);
      for (size_t r = 0; r < firstOutput; ++r)
        TESSEL_CHECK(storageOfTensor[size_t(ids[r])] != s, "{} reads '{}' and writes '{}' in the same storage {}", where,
                     tensors_[size_t(ids[r])].name, t.name, s);
      writer[size_t(id)] = int(c);
      place(id, int(c));
    }
    calls_.push_back(std::move(call));
  }
  for (int out : outputs_) {
    const TensorEntry& t = tensors_[size_t(out)];
    if (isInput[size_t(out)] || storageOfTensor[size_t(out)] < 0) continue;  // passed through
    TESSEL_CHECK(writer[size_t(out)] >= 0, "output '{}' is never computed by any call", t.name);
    TESSEL_CHECK(overwrittenBy[size_t(out)] < 0, "output '{}' is overwritten by call {} before the run ends", t.name,
                 overwrittenBy[size_t(out)] + 1);
  }
}

TesselTensor GraphExecutor::descriptor(const TensorEntry& t) const {
  TesselTensor d = t.storage.abi();
  // The entry's own shape (a planned storage is a flat byte buffer); it lives as long as this.
  d.shape = t.shape.data();
  d.ndim = int32_t(t.shape.size());
  d.strides = nullptr;
  d.dtype_code = uint8_t(t.dtype.code);
  d.dtype_bits = t.dtype.bits;
  d.dtype_lanes = 1;
  return d;
}

const std::string& GraphExecutor::inputName(int index) const {
  TESSEL_CHECK(index >= 0 && index < numInputs(), "input index {} out of range (the graph has {})", index, numInputs());
  return tensors_[size_t(inputs_[size_t(index)])].name;
}
std::vector<int64_t> GraphExecutor::inputShape(int index) const {
  inputName(index);
  return tensors_[size_t(inputs_[size_t(index)])].shape;
}
DataType GraphExecutor::inputDtype(int index) const {
  inputName(index);
  return tensors_[size_t(inputs_[size_t(index)])].dtype;
}
std::vector<int64_t> GraphExecutor::outputShape(int index) const {
  TESSEL_CHECK(index >= 0 && index < numOutputs(), "output index {} out of range (the graph has {})", index, numOutputs());
  return tensors_[size_t(outputs_[size_t(index)])].shape;
}

void GraphExecutor::setInput(const std::string& name, const Tensor& value) {
  for (int i = 0; i < numInputs(); ++i)
    if (inputName(i) == name) return setInput(i, value);
  std::vector<std::string> names;
  for (int i = 0; i < numInputs(); ++i) names.push_back(inputName(i));
  fail("the graph has no input '{}' (inputs: {})", name, fmt::join(names, ", "));
}

void GraphExecutor::setInput(int index, const Tensor& value) {
  TESSEL_CHECK(value.defined(), "input '{}': the tensor is undefined", inputName(index));
  Tensor host = value.to(Device::cpu());
  setInputFromHost(index, host.dtype(), host.shape(), host.data());
}

void GraphExecutor::setInputFromHost(int index, DataType dtype, const std::vector<int64_t>& shape, const void* data) {
  inputName(index);
  const TensorEntry& t = tensors_[size_t(inputs_[size_t(index)])];
  TESSEL_CHECK(dtype == t.dtype && shape == t.shape, "input '{}': expected {} {}, got {} {}", t.name, t.dtype.str(),
               formatShape(t.shape), dtype.str(), formatShape(shape));
  deviceAPI(device_).copyFromHost(t.storage.data(), data, size_t(planTensorBytes(t.name, t.dtype, t.shape)));
}

void GraphExecutor::Call::invoke() const {
  if (handler) handler(args.data(), int(args.size()));
  else if (gpu) gpuKernel.launchPacked(args.data(), int(args.size()));
  else kernel.callPacked(args.data(), int(args.size()));
}

void GraphExecutor::replaceCall(size_t index, CallHandler handler) {
  TESSEL_CHECK(index < calls_.size(), "replaceCall: there is no call {} (the graph has {})", index, calls_.size());
  calls_[index].handler = std::move(handler);
  cudaGraph_.reset();  // a host function cannot be replayed from a graph: usesCudaGraph() says so
}

bool GraphExecutor::usesCudaGraph() const {
  if (!cudaGraphWanted_) return false;
  for (const Call& call : calls_)
    if (call.handler) return false;
  return true;
}

void GraphExecutor::invokeCalls() {
  for (size_t i = 0; i < calls_.size(); ++i) {
    try {
      calls_[i].invoke();
    } catch (const Error& e) {
      throw e.withContext(fmt::format("call {} of {} ({})", i + 1, calls_.size(), calls_[i].name));
    }
  }
}

void GraphExecutor::run() {
  if (usesCudaGraph()) {
    if (!cudaGraph_) cudaGraph_ = CudaGraph::capture(device_.id, [this] { invokeCalls(); });
    cudaGraph_->launch();
  } else {
    invokeCalls();
  }
  if (device_.kind != DeviceKind::CPU) deviceAPI(device_).synchronize();
}

Tensor GraphExecutor::getOutput(int index) const {
  outputShape(index);
  const TensorEntry& t = tensors_[size_t(outputs_[size_t(index)])];
  Tensor out = Tensor::empty(t.shape, t.dtype);
  deviceAPI(device_).copyToHost(out.data(), t.storage.data(), out.nbytes());
  return out;
}

void GraphExecutor::setZeroInputs() {
  for (int i = 0; i < numInputs(); ++i) {
    auto t = Tensor::empty(inputShape(i), inputDtype(i));
    std::memset(t.data(), 0, t.nbytes());
    setInput(i, t);
  }
}

TimingResult GraphExecutor::benchmark(const TimeEvaluatorOptions& options) {
  return timeFunction([this] { run(); }, options);
}

std::vector<GraphExecutor::CallProfile> GraphExecutor::profile(int repeat) {
  TESSEL_CHECK(repeat >= 1, "profile: repeat must be at least 1, got {}", repeat);
  std::vector<std::vector<double>> samples(calls_.size());
  run();  // warm-up
  const bool cpu = device_.kind == DeviceKind::CPU;
  const int burst = cpu ? 1 : kGpuProfileBurst;
  for (int r = 0; r < repeat; ++r) {
    for (size_t i = 0; i < calls_.size(); ++i) {
      if (!cpu) deviceAPI(device_).synchronize();
      double start = steadySeconds();
      for (int b = 0; b < burst; ++b) calls_[i].invoke();
      if (!cpu) deviceAPI(device_).synchronize();
      samples[i].push_back((steadySeconds() - start) / burst);
    }
  }
  std::vector<CallProfile> result;
  for (size_t i = 0; i < calls_.size(); ++i) {
    std::sort(samples[i].begin(), samples[i].end());
    result.push_back({calls_[i].name, samples[i][samples[i].size() / 2]});
  }
  return result;
}

size_t GraphExecutor::plannedBytes() const {
  size_t total = 0;
  for (const auto& s : storages_) total += s.nbytes();
  return total;
}

}  // namespace tessel::runtime
