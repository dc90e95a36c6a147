// bench_core: how close the code generator gets to the hardware, and how fast a schedule
// becomes a callable kernel. Prints `BENCH <name> <value> <unit>` lines (see issue 2):
//   peak_gflops_1t / _2t         measured FP32 FMA peak of this machine, at the target's vector width
//   sgemm1024_1t / _2t_gflops    SGEMM 1024^3 with the hand schedule of HandSchedules.h
//   conv_res2_gflops (+ _1t)     ResNet-18 conv 56x56 64->64 3x3 s1 p1, HandSchedules.h
//   conv_res2_onednn_gflops      oneDNN on the same conv, same run, same threads
//   *_vs_onednn                  ours over oneDNN in speed, timed in alternation: the median of
//                                the rounds' ratios (the middle half of them on a `#` line)
//   conv_res2_winograd_gflops    the same conv as Winograd (the default rules' tile and schedule),
//                                counted in the direct convolution's operations, against oneDNN's
//   sgemm1024_onednn_*           oneDNN's SGEMM on the same matrices, same run, as a check of the peak
//   build_ms_median              step list -> loaded, callable conv kernel
//   lower_split_chain_300_ms     lowering 300 chained splits (was cubic in the list's length)
// Every timed kernel is first checked against an independent result, so a fast wrong kernel
// cannot post a number. BENCH_TARGET (default "cpu", this machine) is the target the kernels
// are compiled and scheduled for, e.g. "cpu -mcpu=haswell" on an AVX-512 host; oneDNN is then
// limited to the same ISA (OneDnnIsa.h) and the peak loop to the target's vector width.
// BENCH_DUMP=DIR writes each kernel's C++ source there, to read what a schedule became.
// BENCH_ONLY=sgemm|conv times only that part; BENCH_SGEMM=rows,vectors,blockTiles[,packA] and
// BENCH_CONV=pixels,vectors[,channelsOuter] replace the hand schedules' tiles (HandSchedules.h), to try others.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include "FmaPeak.h"
#include "HandSchedules.h"
#include "OneDnnConv.h"
#include "OneDnnIsa.h"
#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "ops/Examples.h"
#include "ops/Schedules.h"
#include "ops/Winograd.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "runtime/Tensor.h"
#include "runtime/Threading.h"
#include "runtime/TimeEvaluator.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"
#include "target/Target.h"

namespace tessel::bench {
namespace {

void report(const std::string& name, double value, const std::string& unit) {
  fmt::print("BENCH {} {:.4g} {}\n", name, value, unit);
  std::fflush(stdout);
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// The whole path from a step list to a callable kernel, as tuning takes it for every candidate.
struct BuiltKernel {
  runtime::Module module;
  runtime::Kernel kernel;
  double lowerMs = 0, compileMs = 0, loadMs = 0;
};

BuiltKernel build(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps, const std::string& name,
                  const target::Target& target) {
  TempDir dir("tessel-bench");
  auto t0 = std::chrono::steady_clock::now();
  auto function = passes::lower(schedule::replay(dag, steps), name);
  std::string source = codegen::generateCSource({function});
  if (const char* d = std::getenv("BENCH_DUMP")) writeFile(std::string(d) + "/" + name + ".cpp", source);
  double lowerMs = millisecondsSince(t0);
  auto t1 = std::chrono::steady_clock::now();
  codegen::compileSharedLibrary(source, dir.path() + "/kernel.so", codegen::compileOptionsForTarget(target));
  double compileMs = millisecondsSince(t1);
  auto t2 = std::chrono::steady_clock::now();
  auto module = runtime::Module::load(dir.path() + "/kernel.so");
  auto kernel = module.kernel(name);
  return {module, kernel, lowerMs, compileMs, millisecondsSince(t2)};
}

void fillRandom(runtime::Tensor& t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* p = t.dataAs<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
}

/// Times the calls in alternation (runtime::timeInterleaved, 15 rounds of at least 100 ms
/// each): a phase of the machine's speed hits them alike, so their round-by-round ratios are
/// the same-run comparison a "vs oneDNN" figure claims to be.
std::vector<runtime::TimingResult> timeAlternated(const std::vector<std::function<void()>>& calls) {
  runtime::TimeEvaluatorOptions options;
  options.repeat = 15;
  options.minRepeatMs = 100;
  options.warmup = 2;
  return runtime::timeInterleaved(calls, options);
}

/// `name` (ours over the peer, as a speed ratio: the peer's time over ours) round by round,
/// with the middle half of the rounds, which says how far this machine's noise moves it.
void reportRatio(const std::string& name, const runtime::TimingResult& ours, const runtime::TimingResult& peer) {
  auto r = runtime::roundRatios(peer, ours);
  fmt::print("# {}: round by round {:.3f}, the middle half of the rounds {:.3f}-{:.3f}\n", name, r.median, r.lowerQuartile,
             r.upperQuartile);
  report(name, r.median, "ratio");
}

void benchPeak(double& peak1, double& peak2, const target::Target& target) {
  peak1 = measureFmaPeakGflops(1, target.cpu.vectorBytes);
  peak2 = measureFmaPeakGflops(2, target.cpu.vectorBytes);
  fmt::print("# FMA peak loop: {}\n", fmaPeakIsa());
  report("peak_gflops_1t", peak1, "GFLOPS");
  report("peak_gflops_2t", peak2, "GFLOPS");
}

void benchSgemm(double peak1, double peak2, const target::Target& target) {
  const int64_t n = 1024;
  auto dag = ops::matmul(n, n, n);
  SgemmTile tile;
  if (const char* text = std::getenv("BENCH_SGEMM"); text && *text)
    TESSEL_CHECK(std::sscanf(text, "%ld,%ld,%ld,%ld", &tile.rows, &tile.vectors, &tile.blockTiles, &tile.packA) >= 3,
                 "BENCH_SGEMM={}: expected rows,vectors,block tiles[,pack A]", text);
  fmt::print("# SGEMM tile {} x {} vectors, {} tiles a row block\n", tile.rows, tile.vectors, tile.blockTiles);
  auto built = build(dag, sgemmSchedule(target.cpu, tile), "matmul", target);
  auto a = runtime::Tensor::empty({n, n}, DataType::float32());
  auto b = runtime::Tensor::empty({n, n}, DataType::float32());
  auto c = runtime::Tensor::empty({n, n}, DataType::float32());
  fillRandom(a, 1);
  fillRandom(b, 2);
  built.kernel.call({a, b, c});
  // Spot-check entries against a double-precision dot product (all of C is 1e9 operations),
  // relative to the sum of magnitudes: float rounding is bounded by that, cancellation is not.
  const float *pa = a.dataAs<float>(), *pb = b.dataAs<float>(), *pc = c.dataAs<float>();
  auto check = [&](const float* result, const char* who) {
    std::mt19937 rng(3);
    for (int s = 0; s < 256; ++s) {
      int64_t i = rng() % n, j = rng() % n;
      double want = 0, magnitude = 0;
      for (int64_t k = 0; k < n; ++k) {
        want += double(pa[i * n + k]) * pb[k * n + j];
        magnitude += std::fabs(double(pa[i * n + k]) * pb[k * n + j]);
      }
      if (std::fabs(result[i * n + j] - want) > 1e-5 * magnitude)
        fail("sgemm1024: {}'s C[{}, {}] = {} but the reference says {}", who, i, j, result[i * n + j], want);
    }
  };
  check(pc, "tessel");
  auto call = built.kernel.bind({a, b, c});
  double flops = dag.flopCount();

  // oneDNN's SGEMM on the same matrices, timed in alternation with ours: an independent
  // reference next to the peak loop (a peak that a real kernel exceeds is no peak).
  auto peer = runtime::Tensor::empty({n, n}, DataType::float32());
  auto onednn = [&] {
    if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, pa, n, pb, n, 0.0f, peer.dataAs<float>(), n) != dnnl_success)
      fail("oneDNN's sgemm failed");
  };
  for (int threads : {1, 2}) {
    runtime::setKernelThreadCount(threads);
    onednn();
    check(peer.dataAs<float>(), "oneDNN");
    auto timed = timeAlternated({call, onednn});
    const double ours = flops / timed[0].median / 1e9, theirs = flops / timed[1].median / 1e9;
    const double peak = threads == 1 ? peak1 : peak2;
    const std::string t = std::to_string(threads) + "t";
    report("sgemm1024_" + t + "_gflops", ours, "GFLOPS");
    report("sgemm1024_" + t + "_fraction_of_peak", ours / peak, "ratio");
    report("sgemm1024_onednn_" + t + "_gflops", theirs, "GFLOPS");
    report("sgemm1024_onednn_" + t + "_fraction_of_peak", theirs / peak, "ratio");
    reportRatio("sgemm1024_" + t + "_vs_onednn", timed[0], timed[1]);
  }
}

/// Lowering time of a long step list (300 chained splits), as an auto-scheduler produces
/// them: it was cubic in the list's length.
void benchLongStepList() {
  auto dag = ops::matmul(64, 64, 64);
  std::vector<schedule::StepPtr> steps;
  std::string iterator = "i";
  for (int k = 0; k < 300; ++k) {
    steps.push_back(std::make_shared<schedule::SplitStep>("C", iterator, std::vector<int64_t>{1}));
    iterator += ".1";
  }
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    passes::lower(schedule::replay(dag, steps), "chain");
    ms.push_back(millisecondsSince(start));
  }
  std::sort(ms.begin(), ms.end());
  report("lower_split_chain_300_ms", ms[ms.size() / 2], "ms");
}

/// Every 61st output of the conv in double precision, with the sum of its terms' magnitudes:
/// float rounding is bounded by that sum, cancellation is not (an output near zero has a large
/// relative error under any summation order). Both tessel's and oneDNN's outputs are held to it.
void checkConvOutputs(const Conv2dShape& s, const float* data, const float* weight, const float* out, const char* who,
                      double tolerance = 1e-5) {
  for (int64_t index = 0; index < s.outHeight() * s.outWidth() * s.outChannels; index += 61) {
    int64_t k = index % s.outChannels, x = index / s.outChannels % s.outWidth(), y = index / s.outChannels / s.outWidth();
    double want = 0, magnitude = 0;
    for (int64_t ry = 0; ry < s.kernel; ++ry)
      for (int64_t rx = 0; rx < s.kernel; ++rx) {
        int64_t iy = y * s.stride + ry - s.pad, ix = x * s.stride + rx - s.pad;
        if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;
        for (int64_t c = 0; c < s.inChannels; ++c) {
          double term = double(data[(iy * s.width + ix) * s.inChannels + c]) * weight[((ry * s.kernel + rx) * s.inChannels + c) * s.outChannels + k];
          want += term;
          magnitude += std::fabs(term);
        }
      }
    if (std::fabs(out[index] - want) > tolerance * magnitude)
      fail("conv_res2: {}'s output {} (y {}, x {}, k {}) is {} but the reference says {} (terms' magnitude {})", who, index, y, x, k,
           out[index], want, magnitude);
  }
}

void benchConv(const target::Target& target) {
  const Conv2dShape shape{1, 64, 56, 56, 64, 3, 1, 1};
  auto dag = ops::conv2dNHWC(shape.batch, shape.inChannels, shape.height, shape.width, shape.outChannels, shape.kernel,
                             shape.kernel, shape.stride, shape.pad);
  ConvTile tile;
  if (const char* text = std::getenv("BENCH_CONV"); text && *text)
    TESSEL_CHECK(std::sscanf(text, "%ld,%ld,%ld", &tile.pixels, &tile.vectors, &tile.channelsOuter) >= 2,
                 "BENCH_CONV={}: expected pixels,vectors[,channels outer]", text);
  auto steps = convRes2Schedule(target.cpu, tile);
  auto built = build(dag, steps, "conv2d_nhwc", target);
  auto data = runtime::Tensor::empty({shape.batch, shape.height, shape.width, shape.inChannels}, DataType::float32());
  auto weight =
      runtime::Tensor::empty({shape.kernel, shape.kernel, shape.inChannels, shape.outChannels}, DataType::float32());
  auto out = runtime::Tensor::empty({shape.batch, shape.outHeight(), shape.outWidth(), shape.outChannels},
                                    DataType::float32());
  auto peerOut = runtime::Tensor::empty(out.shape(), DataType::float32());
  fillRandom(data, 4);
  fillRandom(weight, 5);
  built.kernel.call({data, weight, out});
  checkConvOutputs(shape, data.dataAs<float>(), weight.dataAs<float>(), out.dataAs<float>(), "tessel");
  auto call = built.kernel.bind({data, weight, out});

  // The same layer as tessel builds it in a network on this target: Winograd with the default
  // rules' tile and schedule, on the weight transformed ahead (as the graph pass does).
  const int m = ops::defaultWinogradTileSize(shape.inChannels, shape.outChannels, shape.outHeight(), shape.outWidth(),
                                             size_t(target.cpu.l2Bytes));
  TESSEL_CHECK(m > 0, "conv_res2: the default rules of {} keep this layer direct", target.str());
  auto winogradDag = ops::conv2dWinogradNHWC(shape.batch, shape.inChannels, shape.height, shape.width, shape.outChannels, shape.pad, m);
  auto winograd = build(winogradDag, ops::defaultCpuSchedule(winogradDag, ops::cpuScheduleOptionsFor(target)), "winograd", target);
  std::vector<float> transformed = ops::winogradWeightTransform(
      std::vector<float>(weight.dataAs<float>(), weight.dataAs<float>() + weight.numel()), shape.inChannels, shape.outChannels, m);
  auto transformedWeight = runtime::Tensor::empty({m + 2, m + 2, shape.inChannels, shape.outChannels}, DataType::float32());
  std::copy(transformed.begin(), transformed.end(), transformedWeight.dataAs<float>());
  auto winogradOut = runtime::Tensor::empty(out.shape(), DataType::float32());
  winograd.kernel.call({data, transformedWeight, winogradOut});
  // Winograd's transforms round more than the direct sum: held to 1e-4 of the terms' magnitude.
  checkConvOutputs(shape, data.dataAs<float>(), weight.dataAs<float>(), winogradOut.dataAs<float>(), "tessel's Winograd", 1e-4);
  auto callWinograd = winograd.kernel.bind({data, transformedWeight, winogradOut});

  // oneDNN fixes its thread count when the primitive is created: one primitive per count.
  for (int threads : {2, 1}) {
    runtime::setKernelThreadCount(threads);
    OneDnnConv2d peer(shape, data.dataAs<float>(), weight.dataAs<float>(), peerOut.dataAs<float>());
    peer.run();
    checkConvOutputs(shape, data.dataAs<float>(), weight.dataAs<float>(), peerOut.dataAs<float>(), "oneDNN");
    auto timed = timeAlternated({call, [&] { peer.run(); }, callWinograd});
    const std::string t = threads == 1 ? "_1t" : "";
    report("conv_res2" + t + "_gflops", shape.flops() / timed[0].median / 1e9, "GFLOPS");
    report("conv_res2_onednn" + t + "_gflops", shape.flops() / timed[1].median / 1e9, "GFLOPS");
    reportRatio("conv_res2" + t + "_vs_onednn", timed[0], timed[1]);
    if (threads == 2)
      fmt::print("# Winograd F({}x{}), the default rules' tile and schedule; GFLOPS of the direct convolution's operations\n", m, m);
    report("conv_res2_winograd" + t + "_gflops", shape.flops() / timed[2].median / 1e9, "GFLOPS");
    reportRatio("conv_res2_winograd" + t + "_vs_onednn", timed[2], timed[1]);
  }

  // Build time: every stage from the step list to a callable function, as a tuner pays it.
  std::vector<double> total, compile;
  for (int i = 0; i < 9; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto again = build(dag, steps, "conv2d_nhwc", target);
    total.push_back(millisecondsSince(start));
    compile.push_back(again.compileMs);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  report("build_ms_median", median(total), "ms");
  report("build_compile_ms_median", median(compile), "ms");
}

}  // namespace
}  // namespace tessel::bench

int main() {
  using namespace tessel::bench;
  try {
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
      char load[64] = {};
      if (std::fgets(load, sizeof load, f)) fmt::print("# load average at the start: {}", load);
      std::fclose(f);
    }
    const char* text = std::getenv("BENCH_TARGET");
    auto target = tessel::target::Target::parse(text && *text ? text : "cpu");
    TESSEL_CHECK(target.isCpu(), "BENCH_TARGET={}: bench_core times CPU kernels", target.str());
    fmt::print("# target {}: {}\n# {}\n", target.str(), target.cpu.summary(), limitOneDnnToTarget(target));
    double peak1 = 0, peak2 = 0;
    const char* only = std::getenv("BENCH_ONLY");
    const std::string part = only ? only : "";
    benchPeak(peak1, peak2, target);
    if (part.empty() || part == "sgemm") benchSgemm(peak1, peak2, target);
    if (part.empty() || part == "conv") benchConv(target);
    if (part.empty()) benchLongStepList();
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_core: {}\n", e.what());
    return 1;
  }
  return 0;
}
