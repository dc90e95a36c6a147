#include "runtime/GraphExecutor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "support/Error.h"
#include "support/TempDir.h"

namespace tessel::runtime {

namespace {

size_t bytesOf(DataType dtype, const std::vector<int64_t>& shape) {
  size_t n = size_t(dtype.storageBytes());
  for (int64_t d : shape) n *= size_t(d);
  return n;
}

}  // namespace

GraphExecutor GraphExecutor::load(const std::string& directory) {
  std::string planPath = directory + "/graph.json";
  nlohmann::json plan;
  try {
    plan = nlohmann::json::parse(readFile(planPath));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", planPath, e.what());
  }
  Module module = Module::load(directory + "/kernels.so");
  return GraphExecutor(module, plan, loadParams(directory + "/params.bin"), planPath);
}

GraphExecutor::GraphExecutor(Module kernels, const nlohmann::json& plan, const NamedTensors& params,
                             const std::string& origin)
    : module_(std::move(kernels)) {
  auto where = [&](const std::string& what) { return fmt::format("{}: {}", origin, what); };
  try {
    TESSEL_CHECK(plan.value("format", "") == "tessel.graph_executor", "{}", where("not a tessel graph executor plan"));
    TESSEL_CHECK(plan.value("version", 0) == 1, "{}", where(fmt::format("plan version {} is not supported", plan.value("version", 0))));
    for (const auto& bytes : plan.at("storages")) {
      int64_t n = bytes.get<int64_t>();
      TESSEL_CHECK(n >= 0, "{}", where(fmt::format("negative storage size {}", n)));
      storages_.push_back(Tensor::empty({std::max<int64_t>(n, 1)}, DataType::uint8()));
      std::memset(storages_.back().data(), 0, size_t(std::max<int64_t>(n, 1)));
    }
    const auto& tensors = plan.at("tensors");
    for (size_t i = 0; i < tensors.size(); ++i) {
      const auto& t = tensors[i];
      TensorEntry e;
      e.name = t.at("name").get<std::string>();
      e.dtype = DataType::parse(t.at("dtype").get<std::string>());
      e.shape = t.at("shape").get<std::vector<int64_t>>();
      size_t bytes = bytesOf(e.dtype, e.shape);
      if (t.contains("param")) {
        std::string p = t.at("param").get<std::string>();
        auto it = params.find(p);
        TESSEL_CHECK(it != params.end(), "{}", where(fmt::format("tensor '{}' needs parameter '{}', which the parameters lack", e.name, p)));
        TESSEL_CHECK(it->second.dtype() == e.dtype && it->second.shape() == e.shape, "{}",
                     where(fmt::format("parameter '{}' is {} {}, the plan expects {} {}", p, it->second.dtype().str(),
                                       formatShape(it->second.shape()), e.dtype.str(), formatShape(e.shape))));
        e.storage = it->second.to(Device::cpu());
      } else {
        int64_t s = t.at("storage").get<int64_t>();
        TESSEL_CHECK(s >= 0 && s < int64_t(storages_.size()), "{}", where(fmt::format("tensor '{}': storage {} does not exist", e.name, s)));
        TESSEL_CHECK(storages_[size_t(s)].nbytes() >= bytes, "{}",
                     where(fmt::format("tensor '{}' needs {} bytes, storage {} has {}", e.name, bytes, s, storages_[size_t(s)].nbytes())));
        e.storage = storages_[size_t(s)];
        unplannedBytes_ += bytes;
      }
      tensors_.push_back(std::move(e));
    }
    auto tensorId = [&](const nlohmann::json& j, const std::string& what) {
      int64_t id = j.get<int64_t>();
      TESSEL_CHECK(id >= 0 && id < int64_t(tensors_.size()), "{}", where(fmt::format("{}: tensor {} does not exist", what, id)));
      return int(id);
    };
    for (const auto& i : plan.at("inputs")) inputs_.push_back(tensorId(i, "inputs"));
    for (const auto& o : plan.at("outputs")) outputs_.push_back(tensorId(o, "outputs"));
    for (const auto& c : plan.at("calls")) {
      Call call;
      std::string name = c.at("kernel").get<std::string>();
      call.kernel = module_.kernel(name);
      for (const auto& a : c.at("args")) {
        const TensorEntry& t = tensors_[size_t(tensorId(a, "call of " + name))];
        call.args.push_back(descriptor(t));
      }
      TESSEL_CHECK(call.args.size() == call.kernel.argSpecs().size(), "{}",
                   where(fmt::format("call of '{}' passes {} arguments, the kernel takes {}", name, call.args.size(),
                                     call.kernel.argSpecs().size())));
      for (size_t a = 0; a < call.args.size(); ++a) {
        const ArgSpec& spec = call.kernel.argSpecs()[a];
        const TesselTensor& d = call.args[a];
        std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
        bool shapeOk = shape.size() == spec.shape.size();
        for (size_t k = 0; shapeOk && k < shape.size(); ++k) shapeOk = spec.shape[k] == -1 || spec.shape[k] == shape[k];
        TESSEL_CHECK(shapeOk && DataType(DataType::Code(d.dtype_code), d.dtype_bits) == spec.dtype, "{}",
                     where(fmt::format("call of '{}', argument '{}': the plan gives {} {}, the kernel expects {} {}", name,
                                       spec.name, DataType(DataType::Code(d.dtype_code), d.dtype_bits).str(),
                                       formatShape(shape), spec.dtype.str(), formatShape(spec.shape))));
      }
      calls_.push_back(std::move(call));
    }
  } catch (const nlohmann::json::exception& e) {
    fail("{}", where(fmt::format("malformed plan: {}", e.what())));
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
  inputName(index);
  const TensorEntry& t = tensors_[size_t(inputs_[size_t(index)])];
  TESSEL_CHECK(value.defined(), "input '{}': the tensor is undefined", t.name);
  TESSEL_CHECK(value.dtype() == t.dtype && value.shape() == t.shape, "input '{}': expected {} {}, got {} {}", t.name,
               t.dtype.str(), formatShape(t.shape), value.dtype().str(), formatShape(value.shape()));
  Tensor host = value.to(Device::cpu());
  std::memcpy(t.storage.data(), host.data(), host.nbytes());
}

void GraphExecutor::run() {
  for (size_t i = 0; i < calls_.size(); ++i) {
    try {
      calls_[i].kernel.callPacked(calls_[i].args.data(), int(calls_[i].args.size()));
    } catch (const Error& e) {
      throw e.withContext(fmt::format("call {} of {} ({})", i + 1, calls_.size(), calls_[i].kernel.name()));
    }
  }
}

Tensor GraphExecutor::getOutput(int index) const {
  outputShape(index);
  const TensorEntry& t = tensors_[size_t(outputs_[size_t(index)])];
  Tensor out = Tensor::empty(t.shape, t.dtype);
  std::memcpy(out.data(), t.storage.data(), out.nbytes());
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
  for (int r = 0; r < repeat; ++r) {
    for (size_t i = 0; i < calls_.size(); ++i) {
      double start = steadySeconds();
      calls_[i].kernel.callPacked(calls_[i].args.data(), int(calls_[i].args.size()));
      samples[i].push_back(steadySeconds() - start);
    }
  }
  std::vector<CallProfile> result;
  for (size_t i = 0; i < calls_.size(); ++i) {
    std::sort(samples[i].begin(), samples[i].end());
    result.push_back({calls_[i].kernel.name(), samples[i][samples[i].size() / 2]});
  }
  return result;
}

size_t GraphExecutor::plannedBytes() const {
  size_t total = 0;
  for (const auto& s : storages_) total += s.nbytes();
  return total;
}

}  // namespace tessel::runtime
