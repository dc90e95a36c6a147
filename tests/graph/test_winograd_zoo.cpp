// Winograd on every stride-1 3x3 convolution shape of the zoo: the compiled F(2x2) and F(4x4)
// kernels (full-size images) against the direct convolution computed in double precision at
// sampled output pixels (every corner and edge tile among them), within 1e-3 relative to the
// output's magnitude. The NHWC form of CPU builds with the default CPU schedule; the NCHW form
// of GPU builds (suite GpuWinogradZoo) stage by stage in plain loops on the CPU, float32 as on
// the GPU (its GPU tiles compute the same sums, checked on PoCL in
// tests/tune/test_gpu_winograd.cpp).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <future>
#include <random>
#include <set>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"
#include "ops/OpTraits.h"
#include "ops/ScheduleRecorder.h"
#include "ops/Schedules.h"
#include "ops/Winograd.h"
#include "ops/WinogradNchw.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "support/TempDir.h"

using namespace tessel;

namespace {

struct ConvShape {
  int64_t h, w, c, k;
  std::array<int64_t, 4> padding;
  auto key() const { return std::make_tuple(h, w, c, k, padding); }
  bool operator<(const ConvShape& o) const { return key() < o.key(); }
};

/// Every distinct Winograd candidate of the zoo networks (`models`, empty: all) at their own
/// image sizes (batch 1), in the layout a CPU build (NHWC) or a GPU build (NCHW) converts the
/// networks to.
std::set<ConvShape> zooShapes(ops::Layout layout = ops::Layout::NHWC, std::vector<std::string> models = {}) {
  std::set<ConvShape> shapes;
  bool nhwc = layout == ops::Layout::NHWC;
  if (models.empty()) models = graph::modelNames();
  for (const auto& name : models) {
    graph::ModelOptions o;
    o.classifierWidth = 16;  // VGG's classifier is not what this test is about
    graph::OptimizeOptions passes;
    passes.desiredLayout = layout;
    graph::Graph g = graph::optimizeGraph(graph::buildModel(name, o), passes);
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      if (!graph::winogradCandidate(g, int(i), layout)) continue;
      const graph::Node& n = g.nodes()[i];
      const auto& data = g.node(n.inputs[0]).type.shape;    // NHWC or NCHW
      const auto& weight = g.node(n.inputs[1]).type.shape;  // HWIO or OIHW
      shapes.insert({nhwc ? data[1] : data[2], nhwc ? data[2] : data[3], nhwc ? data[3] : data[1], nhwc ? weight[3] : weight[0],
                     graph::readConv2dAttrs(n.op, n.attrs).padding});
    }
  }
  return shapes;
}

/// The Winograd form of the shape's convolution with F(m x m) tiles, its data in `layout` and its
/// transformed weight [m + 2, m + 2, C, K].
te::ComputeDAG winogradConvolution(const ConvShape& s, int m, ops::Layout layout) {
  bool nhwc = layout == ops::Layout::NHWC;
  auto data = te::placeholder(nhwc ? std::vector<int64_t>{1, s.h, s.w, s.c} : std::vector<int64_t>{1, s.c, s.h, s.w},
                              DataType::float32(), "data");
  auto weight = te::placeholder({m + 2, m + 2, s.c, s.k}, DataType::float32(), "weight");
  ops::Conv2dAttrs a;
  a.layout = layout;
  a.padding = s.padding;
  return te::ComputeDAG({ops::conv2dWinograd(data, weight, a, m)}, {data, weight});
}

std::vector<float> randomValues(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

/// The NCHW form on the CPU, each stage at the root in plain loops (the float32 sums of the GPU
/// kernel's stages), the transform rows unrolled so that each element is a short sum (the
/// expressions select their rows by the loop variables).
std::vector<schedule::StepPtr> stageByStage(const te::ComputeDAG& dag, int64_t m) {
  ops::Recorder rec(dag);
  for (const auto& op : dag.ops()) {
    auto kind = ops::traitsOf(*op).kind;
    std::vector<std::string> loops = rec.leaves(op->name);
    if (kind == ops::OpKind::WinogradNchwInput || kind == ops::OpKind::WinogradNchwOutputRows) {
      // [row, column, channel, n, th, tw]: the tile's loops outside, its rows and columns inside.
      rec.reorder(op->name, {loops[2], loops[3], loops[4], loops[5], loops[0], loops[1]});
      rec.annotate(op->name, loops[0], schedule::Annotation::Unroll);
      rec.annotate(op->name, loops[1], schedule::Annotation::Unroll);
    } else if (kind == ops::OpKind::WinogradNchwOutput) {
      auto rows = rec.split(op->name, loops[2], {m});
      auto columns = rec.split(op->name, loops[3], {m});
      rec.reorder(op->name, {loops[0], loops[1], rows[0], columns[0], rows[1], columns[1]});
      rec.annotate(op->name, rows[1], schedule::Annotation::Unroll);
      rec.annotate(op->name, columns[1], schedule::Annotation::Unroll);
    } else if (kind == ops::OpKind::WinogradNchwGemm) {
      // [eps, nu, k, n, th, tw, c]: the channel sum outside the tiles, which run contiguous.
      rec.reorder(op->name, {loops[0], loops[1], loops[2], loops[6], loops[3], loops[4], loops[5]});
    }
  }
  return rec.steps;
}

}  // namespace

/// One test per tile size, F(6x6)'s unrolled 8x8 transforms in two, so that ctest runs them
/// side by side.
struct TileSizePart {
  int m = 2;
  int part = 0, parts = 1;  ///< the part checks the shapes i with i % parts == part
};

/// gtest prints a parameter in test listings (and ctest's names).
void PrintTo(const TileSizePart& p, std::ostream* out) { *out << "F(" << p.m << "x" << p.m << ") part " << p.part + 1 << "/" << p.parts; }

class WinogradZoo : public ::testing::TestWithParam<TileSizePart> {};

TEST_P(WinogradZoo, EveryZooShapeWithinOneThousandthOfTheDirectConvolution) {
  const int m = GetParam().m;
  auto shapes = zooShapes();
  ASSERT_GE(shapes.size(), 15u);  // resnets, VGG, squeezenets, inception v3
  struct Case {
    ConvShape shape;
    te::ComputeDAG dag;
  };
  std::vector<Case> cases;
  std::vector<passes::LoweredFunction> functions;
  size_t index = 0;
  for (const ConvShape& s : shapes) {
    if (index++ % size_t(GetParam().parts) != size_t(GetParam().part)) continue;
    te::ComputeDAG dag = winogradConvolution(s, m, ops::Layout::NHWC);
    functions.push_back(passes::lower(schedule::replay(dag, ops::defaultCpuSchedule(dag)), fmt::format("case{}", cases.size())));
    cases.push_back({s, dag});
  }
  TempDir dir("tessel-winograd-zoo");
  // -O1: what this test checks is the transforms' arithmetic, which no optimization level
  // changes (no fast-math); the CLI tests and the ONNX scripts run Winograd kernels built at
  // -O2. -O2's compile of the 45 kernels of the three tile sizes (F(6x6)'s unrolled 8x8
  // transforms above all) took 74 s, -O1's 47.
  codegen::CompileOptions options;
  options.flags = {"-O1", "-march=native"};
  codegen::compileSharedLibrary(codegen::generateCSource(functions), dir.path() + "/winograd.so", options);
  auto module = runtime::Module::load(dir.path() + "/winograd.so");
  for (size_t i = 0; i < cases.size(); ++i) {
    const ConvShape& s = cases[i].shape;
    SCOPED_TRACE(fmt::format("F({0}x{0}) {1}x{2} {3} -> {4}, padding {5},{6},{7},{8}", m, s.h, s.w, s.c, s.k, s.padding[0],
                             s.padding[1], s.padding[2], s.padding[3]));
    auto x = randomValues(size_t(s.h * s.w * s.c), uint32_t(2 * i + 1));
    auto g = randomValues(size_t(9 * s.c * s.k), uint32_t(2 * i + 2));
    auto u = ops::winogradWeightTransform(g, s.c, s.k, m);
    int64_t oh = s.h + s.padding[0] + s.padding[2] - 2, ow = s.w + s.padding[1] + s.padding[3] - 2;
    auto data = runtime::Tensor::empty({1, s.h, s.w, s.c}, DataType::float32());
    auto weight = runtime::Tensor::empty({m + 2, m + 2, s.c, s.k}, DataType::float32());
    auto out = runtime::Tensor::empty({1, oh, ow, s.k}, DataType::float32());
    std::copy(x.begin(), x.end(), data.dataAs<float>());
    std::copy(u.begin(), u.end(), weight.dataAs<float>());
    module.kernel(fmt::format("case{}", i)).call({data, weight, out});
    // Sampled pixels: the four corners, the last row and column (partial tiles), and random ones.
    std::mt19937 rng{uint32_t(i)};
    std::vector<std::pair<int64_t, int64_t>> pixels = {{0, 0}, {0, ow - 1}, {oh - 1, 0}, {oh - 1, ow - 1}};
    for (int64_t y = 0; y < oh; y += std::max<int64_t>(1, oh / 8)) pixels.push_back({y, ow - 1});
    for (int64_t xx = 0; xx < ow; xx += std::max<int64_t>(1, ow / 8)) pixels.push_back({oh - 1, xx});
    for (int r = 0; r < 24; ++r) pixels.push_back({int64_t(rng() % uint64_t(oh)), int64_t(rng() % uint64_t(ow))});
    double scale = 0, worst = 0;
    std::vector<double> want(size_t(s.k));
    for (auto [py, px] : pixels) {
      std::fill(want.begin(), want.end(), 0.0);
      for (int64_t ry = 0; ry < 3; ++ry)
        for (int64_t rx = 0; rx < 3; ++rx) {
          int64_t iy = py + ry - s.padding[0], ix = px + rx - s.padding[1];
          if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
          for (int64_t c = 0; c < s.c; ++c) {
            double v = x[size_t((iy * s.w + ix) * s.c + c)];
            const float* gk = &g[size_t(((ry * 3 + rx) * s.c + c) * s.k)];
            for (int64_t k = 0; k < s.k; ++k) want[size_t(k)] += v * gk[k];
          }
        }
      const float* got = out.dataAs<float>() + (py * ow + px) * s.k;
      for (int64_t k = 0; k < s.k; ++k) {
        scale = std::max(scale, std::fabs(want[size_t(k)]));
        worst = std::max(worst, std::fabs(double(got[k]) - want[size_t(k)]));
      }
    }
    EXPECT_LT(worst / scale, 1e-3) << "worst absolute error " << worst << " at output magnitude " << scale;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiles, WinogradZoo,
                         ::testing::Values(TileSizePart{2, 0, 1}, TileSizePart{4, 0, 1}, TileSizePart{6, 0, 2}, TileSizePart{6, 1, 2}),
                         [](const ::testing::TestParamInfo<TileSizePart>& info) {
                           const TileSizePart& p = info.param;
                           return p.parts == 1 ? fmt::format("F{0}x{0}", p.m) : fmt::format("F{0}x{0}_{1}", p.m, p.part + 1);
                         });

// The GPU builds' form on the shapes of the networks GPU builds are benchmarked with (resnet-18
// and resnet-50: 56x56 to 7x7 images) and of those whose images leave ragged last tiles
// (squeezenet 1.1: 55, 27 and 13; inception v3: 147, 73, 35 and 8); the NHWC test above has
// every network's (VGG's add whole-tile images of more channels).
TEST(GpuWinogradZoo, ResnetSqueezenetAndInceptionShapesWithinOneThousandthOfTheDirectConvolution) {
  auto shapes = zooShapes(ops::Layout::NCHW, {"resnet-18", "resnet-50", "squeezenet_v1.1", "inception_v3"});
  ASSERT_GE(shapes.size(), 12u);
  struct Case {
    ConvShape shape;
    int m;
  };
  std::vector<Case> cases;
  std::vector<passes::LoweredFunction> functions;
  for (const ConvShape& s : shapes)
    for (int m : {2, 4}) {
      te::ComputeDAG dag = winogradConvolution(s, m, ops::Layout::NCHW);
      functions.push_back(passes::lower(schedule::replay(dag, stageByStage(dag, m)), fmt::format("case{}", cases.size())));
      cases.push_back({s, m});
    }
  // Two libraries compiled at once, at -O1 (IEEE float either way: the numbers are -O2's), so
  // that the compiler's time on some fifty functions stays a fraction of a minute.
  TempDir dir("tessel-winograd-zoo");
  codegen::CompileOptions quick;
  quick.flags = {"-O1", "-march=native"};
  size_t half = functions.size() / 2;
  auto compileHalf = [&](size_t first, size_t last, const std::string& path) {
    codegen::compileSharedLibrary(codegen::generateCSource({functions.begin() + int64_t(first), functions.begin() + int64_t(last)}), path, quick);
  };
  auto firstHalf = std::async(std::launch::async, compileHalf, 0, half, dir.path() + "/winograd0.so");
  compileHalf(half, functions.size(), dir.path() + "/winograd1.so");
  firstHalf.get();
  auto first = runtime::Module::load(dir.path() + "/winograd0.so"), second = runtime::Module::load(dir.path() + "/winograd1.so");
  for (size_t i = 0; i < cases.size(); ++i) {
    const runtime::Module& module = i < half ? first : second;
    const ConvShape& s = cases[i].shape;
    int m = cases[i].m;
    SCOPED_TRACE(fmt::format("NCHW F({0}x{0}) {1}x{2} {3} -> {4}, padding {5},{6},{7},{8}", m, s.h, s.w, s.c, s.k, s.padding[0],
                             s.padding[1], s.padding[2], s.padding[3]));
    auto x = randomValues(size_t(s.h * s.w * s.c), uint32_t(2 * i + 1));
    auto g = randomValues(size_t(9 * s.c * s.k), uint32_t(2 * i + 2));  // OIHW
    auto u = ops::winogradWeightTransform(g, s.c, s.k, m, ops::Layout::NCHW);
    int64_t oh = s.h + s.padding[0] + s.padding[2] - 2, ow = s.w + s.padding[1] + s.padding[3] - 2;
    auto data = runtime::Tensor::empty({1, s.c, s.h, s.w}, DataType::float32());
    auto weight = runtime::Tensor::empty({m + 2, m + 2, s.c, s.k}, DataType::float32());
    auto out = runtime::Tensor::empty({1, s.k, oh, ow}, DataType::float32());
    std::copy(x.begin(), x.end(), data.dataAs<float>());
    std::copy(u.begin(), u.end(), weight.dataAs<float>());
    module.kernel(fmt::format("case{}", i)).call({data, weight, out});
    // Sampled pixels: the four corners, the last row and column (partial tiles), and random ones.
    std::mt19937 rng{uint32_t(i)};
    std::vector<std::pair<int64_t, int64_t>> pixels = {{0, 0}, {0, ow - 1}, {oh - 1, 0}, {oh - 1, ow - 1}};
    for (int64_t y = 0; y < oh; y += std::max<int64_t>(1, oh / 8)) pixels.push_back({y, ow - 1});
    for (int64_t xx = 0; xx < ow; xx += std::max<int64_t>(1, ow / 8)) pixels.push_back({oh - 1, xx});
    for (int r = 0; r < 24; ++r) pixels.push_back({int64_t(rng() % uint64_t(oh)), int64_t(rng() % uint64_t(ow))});
    double scale = 0, worst = 0;
    for (auto [py, px] : pixels)
      for (int64_t k = 0; k < s.k; ++k) {
        double want = 0;
        for (int64_t c = 0; c < s.c; ++c)
          for (int64_t ry = 0; ry < 3; ++ry)
            for (int64_t rx = 0; rx < 3; ++rx) {
              int64_t iy = py + ry - s.padding[0], ix = px + rx - s.padding[1];
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              want += double(x[size_t((c * s.h + iy) * s.w + ix)]) * g[size_t(((k * s.c + c) * 3 + ry) * 3 + rx)];
            }
        scale = std::max(scale, std::fabs(want));
        worst = std::max(worst, std::fabs(double(out.dataAs<float>()[(k * oh + py) * ow + px]) - want));
      }
    EXPECT_LT(worst / scale, 1e-3) << "worst absolute error " << worst << " at output magnitude " << scale;
  }
}
