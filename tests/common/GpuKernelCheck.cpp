#include "common/GpuKernelCheck.h"

#include <cmath>
#include <cstring>

#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/Error.h"

namespace tessel::kernelcheck {

namespace {

/// The element types the harness moves: float32, and int32 / int64 (index data, integer kernels).
void checkHandled(DataType dtype, const char* role, const std::string& name) {
  TESSEL_CHECK(dtype == DataType::float32() || dtype == DataType::int32() || dtype == DataType::int64(),
               "GPU test harness: {} '{}' is {}, only float32, int32 and int64 are handled", role, name, dtype.str());
}

template <class T>
std::vector<char> bytesOf(const std::vector<double>& values) {
  std::vector<char> bytes(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    T v = T(values[i]);
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  return bytes;
}

std::vector<char> hostBytes(const std::vector<double>& values, DataType dtype) {
  if (dtype == DataType::int32()) return bytesOf<int32_t>(values);
  if (dtype == DataType::int64()) return bytesOf<int64_t>(values);
  return bytesOf<float>(values);
}

template <class T>
std::vector<double> valuesOf(const std::vector<char>& bytes) {
  std::vector<double> values(bytes.size() / sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    values[i] = double(v);
  }
  return values;
}

std::vector<double> hostValues(const std::vector<char>& bytes, DataType dtype) {
  if (dtype == DataType::int32()) return valuesOf<int32_t>(bytes);
  if (dtype == DataType::int64()) return valuesOf<int64_t>(bytes);
  return valuesOf<float>(bytes);
}

}  // namespace

codegen::GpuBinary buildForGpu(const schedule::State& state, const std::string& targetText, const std::string& name) {
  const target::Target target = target::Target::parse(targetText);
  auto lowered = passes::lowerForGpu(state, name, passes::GpuLimits::forTarget(target));
  return codegen::buildGpuKernels({lowered}, target);
}

double runGpuAndCompare(const runtime::GpuKernel& kernel, const ReferenceData& data) {
  const auto& dag = data.dag;
  runtime::Device device = kernel.spec().device;
  std::vector<runtime::Tensor> args;
  for (auto& name : dag.inputNames()) {
    const auto& op = *dag.op(name);
    checkHandled(op.dtype, "input", name);
    auto t = runtime::Tensor::empty(op.shape, op.dtype, device);
    auto bytes = hostBytes(data.inputs.at(name), op.dtype);
    t.copyFromHost(bytes.data(), bytes.size());
    args.push_back(t);
  }
  for (auto& name : dag.outputNames()) {
    const auto& op = *dag.op(name);
    checkHandled(op.dtype, "output", name);
    auto t = runtime::Tensor::empty(op.shape, op.dtype, device);
    // NaN for floats, 0x7f7f... (far outside the reference's values) for integers.
    auto garbage = op.dtype == DataType::float32() ? hostBytes(std::vector<double>(size_t(t.numel()), std::nan("")), op.dtype)
                                                   : std::vector<char>(size_t(t.numel()) * size_t(op.dtype.storageBytes()), 0x7f);
    t.copyFromHost(garbage.data(), garbage.size());
    args.push_back(t);
  }
  kernel.call(args);
  runtime::deviceAPI(device).synchronize();
  double worst = 0;
  for (size_t o = 0; o < dag.outputNames().size(); ++o) {
    const auto& t = args[dag.inputNames().size() + o];
    std::vector<char> got(size_t(t.numel()) * size_t(t.dtype().storageBytes()));
    t.copyToHost(got.data(), got.size());
    double error = relativeError(hostValues(got, t.dtype()), data.reference.at(dag.outputNames()[o]));
    worst = std::max(worst, std::isnan(error) ? 1e30 : error);
  }
  return worst;
}

std::string cudaUnavailableReason() {
  std::string why;
  return runtime::cudaDeviceAvailable(&why) ? "" : why;
}

std::string openclUnavailableReason() {
  std::string why;
  return runtime::openclDeviceAvailable(&why) ? "" : why;
}

}  // namespace tessel::kernelcheck

namespace tessel::kernelcheck::gpuschedules {

using namespace schedule;

std::vector<StepPtr> matmul(bool sharedA) {
  std::vector<StepPtr> steps = {
      std::make_shared<CacheWriteStep>("C", "local"),
      std::make_shared<SplitStep>("C", "i", std::vector<int64_t>{8}),
      std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{16}),
      std::make_shared<ReorderStep>("C", std::vector<std::string>{"i.0", "j.0", "i.1", "j.1"}),
      std::make_shared<AnnotateStep>("C", "i.0", Annotation::BlockY),
      std::make_shared<AnnotateStep>("C", "j.0", Annotation::BlockX),
      std::make_shared<AnnotateStep>("C", "i.1", Annotation::ThreadY),
      std::make_shared<AnnotateStep>("C", "j.1", Annotation::ThreadX),
      std::make_shared<ComputeAtStep>("C.local", "C", "j.1"),
  };
  if (sharedA) {
    // A block's 8 rows of A, fetched by its 8x16 threads: the fused row-and-column loop split
    // so that each thread copies every 128th element.
    steps.push_back(std::make_shared<CacheReadStep>("A", "shared", std::vector<std::string>{"C.local"}));
    steps.push_back(std::make_shared<ComputeAtStep>("A.shared", "C", "j.0"));
    steps.push_back(std::make_shared<FuseStep>("A.shared", std::vector<std::string>{"ax0", "ax1"}));
    steps.push_back(std::make_shared<SplitStep>("A.shared", "ax0@ax1", std::vector<int64_t>{8, 16}));
    steps.push_back(std::make_shared<AnnotateStep>("A.shared", "ax0@ax1.1", Annotation::ThreadY));
    steps.push_back(std::make_shared<AnnotateStep>("A.shared", "ax0@ax1.2", Annotation::ThreadX));
  }
  return steps;
}

std::vector<StepPtr> matmulTiled() {
  std::vector<StepPtr> steps = matmul(false);
  // The reduction in chunks of 8: per chunk, the block's 8 rows of A and 16 columns of B go to
  // shared memory (attached inside the thread loops, so their regions span the block's threads),
  // copied by the 8x16 threads together, then every thread reads its row and column from there.
  steps.push_back(std::make_shared<SplitStep>("C.local", "k", std::vector<int64_t>{8}));
  steps.push_back(std::make_shared<ReorderStep>("C.local", std::vector<std::string>{"k.0", "k.1", "i", "j"}));
  for (const char* input : {"A", "B"}) {
    std::string shared = std::string(input) + ".shared";
    steps.push_back(std::make_shared<CacheReadStep>(input, "shared", std::vector<std::string>{"C.local"}));
    steps.push_back(std::make_shared<ComputeAtStep>(shared, "C.local", "k.0"));
    steps.push_back(std::make_shared<FuseStep>(shared, std::vector<std::string>{"ax0", "ax1"}));
    steps.push_back(std::make_shared<SplitStep>(shared, "ax0@ax1", std::vector<int64_t>{8, 16}));
    steps.push_back(std::make_shared<AnnotateStep>(shared, "ax0@ax1.1", Annotation::ThreadY));
    steps.push_back(std::make_shared<AnnotateStep>(shared, "ax0@ax1.2", Annotation::ThreadX));
  }
  return steps;
}

std::vector<StepPtr> conv2d() {
  return {
      std::make_shared<ComputeInlineStep>("pad_temp"),
      std::make_shared<SplitStep>("conv2d_nchw", "ff", std::vector<int64_t>{4}),
      std::make_shared<SplitStep>("conv2d_nchw", "xx", std::vector<int64_t>{7}),
      std::make_shared<ReorderStep>("conv2d_nchw", std::vector<std::string>{"nn", "ff.0", "yy", "xx.0", "ff.1", "xx.1", "rc",
                                                                             "ry", "rx"}),
      std::make_shared<AnnotateStep>("conv2d_nchw", "ff.0", Annotation::BlockX),
      std::make_shared<AnnotateStep>("conv2d_nchw", "yy", Annotation::BlockY),
      std::make_shared<AnnotateStep>("conv2d_nchw", "xx.0", Annotation::VThread),
      std::make_shared<AnnotateStep>("conv2d_nchw", "ff.1", Annotation::ThreadY),
      std::make_shared<AnnotateStep>("conv2d_nchw", "xx.1", Annotation::ThreadX),
  };
}

}  // namespace tessel::kernelcheck::gpuschedules
