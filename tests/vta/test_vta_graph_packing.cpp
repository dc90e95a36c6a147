// Graph packing's settings from a VTA hardware configuration (vta/GraphPacking.h).
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "graph/Operators.h"
#include "vta/GraphPacking.h"

using namespace tessel;
using namespace tessel::testsupport;

TEST(VtaGraphPacking, BlocksAndRegionComeFromTheConfiguration) {
  graph::registerStandardOps();
  auto options = vta::graphPackOptions(vta::HardwareConfig{});
  EXPECT_EQ(options.batchBlock, 1);
  EXPECT_EQ(options.channelBlock, 16);
  EXPECT_EQ(options.start.op, "max_pool2d");
  EXPECT_EQ(options.stop.op, "global_avg_pool2d");

  vta::HardwareConfig wide;
  wide.logBatch = 1;
  wide.logBlock = 5;
  options = vta::graphPackOptions(wide, "max_pool2d:2", "cast:4");
  EXPECT_EQ(options.batchBlock, 2);
  EXPECT_EQ(options.channelBlock, 32);
  EXPECT_EQ(options.start.index, 2);
  EXPECT_EQ(options.stop.op, "cast");
  EXPECT_EQ(options.stop.index, 4);
  expectContains(errorOf([] { vta::graphPackOptions(vta::HardwareConfig{}, "nn.max_pool2d"); }),
                 "no operator is named 'nn.max_pool2d'");
}
