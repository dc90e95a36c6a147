// Winograd on every stride-1 3x3 convolution shape of the zoo: the compiled F(2x2) and F(4x4)
// kernels (default schedule, full-size images) against the direct convolution computed in
// double precision at sampled output pixels (every corner and edge tile among them), within
// 1e-3 relative to the output's magnitude.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <set>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "ops/Winograd.h"
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

/// Every distinct Winograd candidate of the zoo networks at their own image sizes (batch 1).
std::set<ConvShape> zooShapes() {
  std::set<ConvShape> shapes;
  for (const auto& name : graph::modelNames()) {
    graph::ModelOptions o;
    o.classifierWidth = 16;  // VGG's classifier is not what this test is about
    graph::Graph g = graph::optimizeGraph(graph::buildModel(name, o));
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      if (!graph::winogradCandidate(g, int(i))) continue;
      const graph::Node& n = g.nodes()[i];
      const auto& data = g.node(n.inputs[0]).type.shape;  // NHWC
      const auto& weight = g.node(n.inputs[1]).type.shape;  // HWIO
      shapes.insert({data[1], data[2], data[3], weight[3], graph::readConv2dAttrs(n.op, n.attrs).padding});
    }
  }
  return shapes;
}

std::vector<float> randomValues(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST(WinogradZoo, EveryZooShapeWithinOneThousandthOfTheDirectConvolution) {
  auto shapes = zooShapes();
  ASSERT_GE(shapes.size(), 15u);  // resnets, VGG, squeezenets, inception v3
  struct Case {
    ConvShape shape;
    int m;
    te::ComputeDAG dag;
  };
  std::vector<Case> cases;
  std::vector<passes::LoweredFunction> functions;
  for (const ConvShape& s : shapes)
    for (int m : {2, 4}) {
      auto data = te::placeholder({1, s.h, s.w, s.c}, DataType::float32(), "data");
      auto weight = te::placeholder({m + 2, m + 2, s.c, s.k}, DataType::float32(), "weight");
      ops::Conv2dAttrs a;
      a.layout = ops::Layout::NHWC;
      a.padding = s.padding;
      te::ComputeDAG dag({ops::conv2dWinograd(data, weight, a, m)}, {data, weight});
      functions.push_back(passes::lower(schedule::replay(dag, ops::defaultCpuSchedule(dag)), fmt::format("case{}", cases.size())));
      cases.push_back({s, m, dag});
    }
  TempDir dir("tessel-winograd-zoo");
  codegen::compileSharedLibrary(codegen::generateCSource(functions), dir.path() + "/winograd.so");
  auto module = runtime::Module::load(dir.path() + "/winograd.so");
  for (size_t i = 0; i < cases.size(); ++i) {
    const ConvShape& s = cases[i].shape;
    int m = cases[i].m;
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
