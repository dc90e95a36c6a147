// resnet-18 quantized as the VTA tutorials quantize it, then packed: the integer network
// compiled for the CPU equals the reference interpreter bit for bit, the packed network equals
// the unpacked one bit for bit, and the quantized features stay near the float ones.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/GraphTestSupport.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::graph::testsupport;

namespace {

runtime::Tensor randomImage(int64_t size, uint32_t seed) { return randomTensor({1, 3, size, size}, seed, 2.0f); }

/// resnet-18 with batch norms folded, in NCHW (TVM's prerequisite_optimize before quantizing).
Graph resnet18(int64_t imageSize) {
  ModelOptions o;
  o.imageSize = imageSize;
  OptimizeOptions prepare;
  prepare.desiredLayout = std::nullopt;
  return optimizeGraph(buildModel("resnet-18", o), prepare);
}

TEST(QuantizedZoo, Resnet18IntegerModuleMatchesTheInterpreterBitForBit) {
  QuantizeOptions all;
  all.skipConvLayers = {};  // integers from the image on, so that nothing depends on float rounding
  Graph q = quantize(resnet18(224), all);
  int pool = q.findNode("global_pool");
  ASSERT_GE(pool, 0);
  ASSERT_EQ(q.node(pool).type.dtype, DataType::int32());
  q.markOutput(pool);
  auto image = randomImage(224, 1);
  auto want = interpretGraph(q, {{"data", image}});
  EXPECT_TRUE(bitEqual(runCompiled(q, {{"data", image}})[1], want[1]));
  int nonzero = 0;
  for (int64_t i = 0; i < want[1].numel(); ++i) nonzero += want[1].dataAs<int32_t>()[i] != 0;
  EXPECT_GT(nonzero, 100);
}

TEST(QuantizedZoo, Resnet18PackedEqualsUnpackedAndStaysNearFloat) {
  Graph f = resnet18(224);
  Graph q = quantize(f);
  Graph packed = graphPack(q);
  int blocked = 0;
  for (const Node& n : packed.nodes()) blocked += n.op == "conv2d_blocked";
  EXPECT_EQ(blocked, 19);  // every conv2d but the first (16 3x3, 3 downsampling 1x1)
  // The pooled features, dequantized, against float's.
  for (Graph* g : {&f, &q, &packed}) g->markOutput(g->findNode(g == &f ? "global_pool" : "global_pool_dequantized"));
  auto image = randomImage(224, 2);
  auto floatOut = interpretGraph(f, {{"data", image}});
  auto quantOut = interpretGraph(q, {{"data", image}});
  auto packedOut = interpretGraph(packed, {{"data", image}});
  ASSERT_EQ(quantOut.size(), 2u);
  for (size_t o = 0; o < 2; ++o) EXPECT_TRUE(bitEqual(packedOut[o], quantOut[o])) << "output " << o;
  const auto& want = floatOut[1];
  const auto& got = quantOut[1];
  double dot = 0, wantNorm = 0, gotNorm = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double a = want.dataAs<float>()[i], b = got.dataAs<float>()[i];
    dot += a * b;
    wantNorm += a * a;
    gotNorm += b * b;
  }
  double cosine = dot / std::sqrt(wantNorm * gotNorm);
  EXPECT_GT(cosine, 0.9) << "quantized features point elsewhere than float's";
}

}  // namespace
