// Prints the speed of the default CPU schedule on typical layer shapes (not a test: timings
// depend on the machine). Usage: ops_gflops [threads] [case-substring]; TESSEL_DUMP_SOURCE=1
// prints the generated code, TESSEL_PRINT_STEPS=1 the schedule.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "ops/Broadcast.h"
#include "ops/Conv2d.h"
#include "ops/Dense.h"
#include "ops/Elementwise.h"
#include "ops/Examples.h"
#include "ops/Pooling.h"
#include "ops/Schedules.h"
#include "ops/Softmax.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "runtime/Tensor.h"
#include "runtime/Threading.h"
#include "runtime/TimeEvaluator.h"
#include "support/Files.h"
#include "support/TempDir.h"
#include "../../bench/core/HandSchedules.h"

using namespace tessel;
using te::placeholder;

namespace {

struct Case {
  std::string name;
  te::ComputeDAG dag;
  bool handSchedule = false;  ///< bench_core's hand schedule of the conv (HandSchedules.h) instead of the default schedule
};

te::ComputeDAG convCase(ops::Layout layout, int64_t n, int64_t c, int64_t hw, int64_t k, int64_t kernel, int64_t stride,
                        int64_t pad, bool epilogue, bool depthwise = false) {
  bool nchw = layout == ops::Layout::NCHW;
  auto data = nchw ? placeholder({n, c, hw, hw}, DataType::float32(), "data") : placeholder({n, hw, hw, c}, DataType::float32(), "data");
  te::Tensor weight;
  if (depthwise) weight = nchw ? placeholder({c, 1, kernel, kernel}, DataType::float32(), "weight")
                               : placeholder({kernel, kernel, c, 1}, DataType::float32(), "weight");
  else weight = nchw ? placeholder({k, c, kernel, kernel}, DataType::float32(), "weight")
                     : placeholder({kernel, kernel, c, k}, DataType::float32(), "weight");
  ops::Conv2dAttrs a;
  a.strides = {stride, stride};
  a.padding = {pad, pad, pad, pad};
  a.layout = layout;
  auto out = depthwise ? ops::depthwiseConv2d(data, weight, a) : ops::conv2d(data, weight, a);
  if (!epilogue) return te::ComputeDAG({out}, {data, weight});
  auto bias = placeholder({out.shape()[nchw ? 1 : 3]}, DataType::float32(), "bias");
  auto y = ops::relu(ops::biasAdd(out, bias, nchw ? 1 : 3));
  return te::ComputeDAG({y}, {data, weight, bias});
}

std::vector<Case> cases() {
  using L = ops::Layout;
  std::vector<Case> c;
  c.push_back({"conv nhwc 56x56x64 3x3 k64", convCase(L::NHWC, 1, 64, 56, 64, 3, 1, 1, false)});
  c.push_back({"hand conv nhwc 56x56x64 3x3 k64", ops::conv2dNHWC(1, 64, 56, 56, 64, 3, 3, 1, 1),
               true});
  c.push_back({"conv nhwc 56x56x64 3x3 k64 +bias+relu", convCase(L::NHWC, 1, 64, 56, 64, 3, 1, 1, true)});
  c.push_back({"conv nhwc 56x56x64 1x1 k256", convCase(L::NHWC, 1, 64, 56, 256, 1, 1, 0, true)});
  c.push_back({"conv nhwc 14x14x256 3x3 k256", convCase(L::NHWC, 1, 256, 14, 256, 3, 1, 1, true)});
  c.push_back({"conv nhwc 7x7x512 3x3 k512", convCase(L::NHWC, 1, 512, 7, 512, 3, 1, 1, true)});
  c.push_back({"conv nhwc 224x224x3 7x7 s2 k64", convCase(L::NHWC, 1, 3, 224, 64, 7, 2, 3, true)});
  c.push_back({"conv nchw 56x56x64 3x3 k64", convCase(L::NCHW, 1, 64, 56, 64, 3, 1, 1, true)});
  c.push_back({"conv nchw 56x56x64 1x1 k256", convCase(L::NCHW, 1, 64, 56, 256, 1, 1, 0, true)});
  c.push_back({"conv nchw 28x28x128 3x3 k128", convCase(L::NCHW, 1, 128, 28, 128, 3, 1, 1, true)});
  c.push_back({"conv nchw 14x14x256 3x3 k256", convCase(L::NCHW, 1, 256, 14, 256, 3, 1, 1, true)});
  c.push_back({"conv nchw 7x7x512 3x3 k512", convCase(L::NCHW, 1, 512, 7, 512, 3, 1, 1, true)});
  c.push_back({"depthwise nhwc 112x112x32 3x3", convCase(L::NHWC, 1, 32, 112, 32, 3, 1, 1, true, true)});
  c.push_back({"depthwise nchw 112x112x32 3x3", convCase(L::NCHW, 1, 32, 112, 32, 3, 1, 1, true, true)});
  for (int64_t batch : {1, 64}) {
    auto x = placeholder({batch, 1024}, DataType::float32(), "data");
    auto w = placeholder({1000, 1024}, DataType::float32(), "weight");
    auto b = placeholder({1000}, DataType::float32(), "bias");
    c.push_back({fmt::format("dense {}x1024 -> 1000 +bias", batch), te::ComputeDAG({ops::biasAdd(ops::dense(x, w), b, 1)}, {x, w, b})});
  }
  {
    auto a = placeholder({1024, 1024}, DataType::float32(), "A");
    auto b = placeholder({1024, 1024}, DataType::float32(), "B");
    c.push_back({"matmul 1024", te::ComputeDAG({ops::matmul(a, b)}, {a, b})});
  }
  {
    auto x = placeholder({1, 112, 112, 64}, DataType::float32(), "data");
    ops::Pool2dAttrs p;
    p.kernel = {3, 3};
    p.strides = {2, 2};
    p.padding = {1, 1, 1, 1};
    p.layout = L::NHWC;
    c.push_back({"max_pool nhwc 112x112x64 3x3 s2", te::ComputeDAG({ops::maxPool2d(x, p)}, {x})});
    auto y = placeholder({1, 64, 112, 112}, DataType::float32(), "data");
    p.layout = L::NCHW;
    c.push_back({"max_pool nchw 112x112x64 3x3 s2", te::ComputeDAG({ops::maxPool2d(y, p)}, {y})});
  }
  {
    auto x = placeholder({1, 7, 7, 2048}, DataType::float32(), "data");
    c.push_back({"global_avg_pool nhwc 7x7x2048", te::ComputeDAG({ops::globalAvgPool2d(x, L::NHWC)}, {x})});
    auto s = placeholder({16, 1000}, DataType::float32(), "data");
    c.push_back({"softmax 16x1000", te::ComputeDAG({ops::softmax(s)}, {s})});
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  std::string filter = argc > 2 ? argv[2] : "";
  runtime::setKernelThreadCount(threads);
  std::vector<Case> selected;
  for (auto& c : cases())
    if (c.name.find(filter) != std::string::npos) selected.push_back(c);
  std::vector<passes::LoweredFunction> functions;
  for (size_t i = 0; i < selected.size(); ++i) {
    ops::CpuScheduleOptions options;
    options.allowFallback = false;
    // TESSEL_STEPS_FILE: a JSON step list to try instead (for every selected case).
    std::string file = std::getenv("TESSEL_STEPS_FILE") ? std::getenv("TESSEL_STEPS_FILE") : "";
    auto steps = !file.empty()                ? schedule::stepsFromJson(nlohmann::json::parse(readFile(file)))
                 : selected[i].handSchedule ? bench::convRes2Schedule(options.machine)
                                            : ops::defaultCpuSchedule(selected[i].dag, options);
    if (std::getenv("TESSEL_PRINT_STEPS")) fmt::print("# {}\n{}\n", selected[i].name, schedule::printSteps(steps));
    functions.push_back(passes::lower(schedule::replay(selected[i].dag, steps), fmt::format("k{}", i)));
  }
  auto source = codegen::generateCSource(functions);
  if (std::getenv("TESSEL_DUMP_SOURCE")) fmt::print("{}\n", source);
  TempDir dir("tessel-gflops");
  codegen::compileSharedLibrary(source, dir.path() + "/ops.so");
  auto module = runtime::Module::load(dir.path() + "/ops.so");
  fmt::print("{} thread(s)\n", threads);
  for (size_t i = 0; i < selected.size(); ++i) {
    const auto& dag = selected[i].dag;
    std::vector<runtime::Tensor> args;
    for (auto& name : dag.inputNames()) {
      auto t = runtime::Tensor::empty(dag.op(name)->shape, dag.op(name)->dtype);
      auto* p = static_cast<float*>(t.data());
      for (int64_t e = 0; e < t.numel(); ++e) p[e] = float((e * 7919) % 1000) / 1000.0f;
      args.push_back(t);
    }
    for (auto& name : dag.outputNames()) args.push_back(runtime::Tensor::empty(dag.op(name)->shape, dag.op(name)->dtype));
    auto call = module.kernel(fmt::format("k{}", i)).bind(args);
    runtime::TimeEvaluatorOptions o;
    o.repeat = 5;
    o.minRepeatMs = 50;
    auto r = runtime::timeFunction(call, o);
    double flops = dag.flopCount();
    fmt::print("{:<44} {:10.3f} ms {:9.1f} GFLOPS\n", selected[i].name, r.median * 1e3, flops / r.median / 1e9);
  }
}
