// driver::prepareModel: the passes and variants a network goes through, per target and option,
// as every network-level flow (the CLI's tasks, compile and tune; the benches) prepares it.
#include <gtest/gtest.h>

#include <string>

#include "driver/PreparedModel.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"

namespace tessel::driver {
namespace {

int countOps(const graph::Graph& g, const std::string& op) {
  int n = 0;
  for (const graph::Node& node : g.nodes()) n += node.kind == graph::NodeKind::Op && node.op == op;
  return n;
}

int countFlagged(const graph::Graph& g, const std::string& flag) {
  int n = 0;
  for (const graph::Node& node : g.nodes()) n += node.kind == graph::NodeKind::Op && node.attrs.value(flag, false);
  return n;
}

graph::Graph bertLayer() {
  graph::registerStandardOps();
  graph::ModelOptions zoo;
  zoo.layers = 1;
  zoo.sequence = 16;
  return graph::buildModel("bert-base", zoo);
}

PrepareOptions optionsFor(const std::string& target) {
  PrepareOptions o;
  o.target = target::Target::parse(target);
  o.desiredLayout = defaultDesiredLayout(o.target);
  return o;
}

TEST(PreparedModel, GpuTargetsSplitProductsAndComputeTheirLayoutsInTheProductsWithoutCpuPacking) {
  PreparedModel cuda = prepareModel(bertLayer(), optionsFor("cuda"));
  // The query, key and value heads, the merged context and the split products' row slices.
  EXPECT_GE(countFlagged(cuda.base, "fuse_into_reader"), 9);
  EXPECT_GT(countOps(cuda.base, "sum"), 0) << "split_reductions: partial products and their sum";
  EXPECT_EQ(countOps(cuda.chosen, "matmul_packed"), 0);
  EXPECT_FALSE(cuda.pack);
  EXPECT_EQ(cuda.winogradLayout, ops::Layout::NCHW);

  PrepareOptions apart = optionsFor("cuda");
  apart.fuseLayouts = false;
  apart.splitReductions = false;
  PreparedModel kept = prepareModel(bertLayer(), apart);
  EXPECT_EQ(countFlagged(kept.base, "fuse_into_reader"), 0);
  EXPECT_EQ(countOps(kept.base, "sum"), 0);
}

TEST(PreparedModel, CpuTargetsPackTheirProductsAndKeepTheGpuPassesOff) {
  PreparedModel cpu = prepareModel(bertLayer(), optionsFor("cpu"));
  EXPECT_EQ(countFlagged(cpu.base, "fuse_into_reader"), 0);
  EXPECT_EQ(countOps(cpu.base, "sum"), 0);
  EXPECT_GT(countOps(cpu.chosen, "matmul_packed"), 0);
  EXPECT_EQ(countOps(cpu.base, "matmul_packed"), 0) << "base is before packing";
  PrepareOptions unpacked = optionsFor("cpu");
  unpacked.packWeights = false;
  EXPECT_EQ(countOps(prepareModel(bertLayer(), unpacked).chosen, "matmul_packed"), 0);
  PrepareOptions none = optionsFor("cpu");
  none.optimize = false;
  graph::Graph raw = bertLayer();
  EXPECT_EQ(prepareModel(raw, none).chosen.nodes().size(), raw.nodes().size());
}

TEST(PreparedModel, WinogradModesChooseTheConvolutionsVariants) {
  graph::registerStandardOps();
  graph::ModelOptions zoo;
  zoo.imageSize = 32;
  zoo.widthDivisor = 4;
  graph::Graph resnet = graph::buildModel("resnet-18", zoo);
  PrepareOptions fixed = optionsFor("cpu");
  fixed.winograd = {WinogradMode::Kind::Fixed, 2};
  PreparedModel every = prepareModel(resnet, fixed);
  EXPECT_FALSE(every.variants);
  EXPECT_GT(countOps(every.chosen, "conv2d_winograd"), 0);
  PrepareOptions never = optionsFor("cpu");
  never.winograd = {WinogradMode::Kind::Never, 0};
  EXPECT_EQ(countOps(prepareModel(resnet, never).chosen, "conv2d_winograd"), 0);
  // GPU targets under auto: untuned direct, every candidate as Winograd the variant tuning measures.
  PreparedModel gpu = prepareModel(resnet, optionsFor("cuda"));
  EXPECT_TRUE(gpu.variants && gpu.chosenIsDirect);
  EXPECT_EQ(countOps(gpu.chosen, "conv2d_winograd"), 0);
  ASSERT_EQ(gpu.winograd.size(), 1u);
  EXPECT_GT(countOps(gpu.winograd[0], "conv2d_winograd"), 0);
}

}  // namespace
}  // namespace tessel::driver
