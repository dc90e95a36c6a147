// `tessel run` and `tessel benchmark` on a module directory the graph layer built.
#include <gtest/gtest.h>

#include "common/TesselCli.h"
#include "graph/Build.h"
#include "graph/CliTestGraph.h"
#include "runtime/Npy.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::graph;

namespace {

TEST(ModuleCli, RunAndBenchmark) {
  Graph g = graph::testsupport::diagonalMatmulGraph();
  TempDir dir;
  buildGraph(g, dir.path() + "/m");
  auto ones = runtime::Tensor::empty({1, 8}, DataType::float32());
  for (int i = 0; i < 8; ++i) ones.dataAs<float>()[i] = 1.0f;
  runtime::saveNpy(ones, dir.path() + "/ones.npy");

  auto run = runSubprocess({tesselCli(), "run", dir.path() + "/m", "--input", dir.path() + "/ones.npy"});
  ASSERT_TRUE(run.ok()) << run.output;
  EXPECT_NE(run.output.find("output shape [1, 8]; top-5:\n  class     7  score 63\n  class     6  score 54\n"), std::string::npos)
      << run.output;
  auto random = runSubprocess({tesselCli(), "run", dir.path() + "/m", "--random"});
  EXPECT_TRUE(random.ok()) << random.output;
  auto bench = runSubprocess({tesselCli(), "benchmark", dir.path() + "/m", "--repeat", "3", "--min-repeat-ms", "5"});
  ASSERT_TRUE(bench.ok()) << bench.output;
  // (A busy machine adds a line before it saying so.)
  EXPECT_NE(bench.output.find("Mean inference time (std dev): "), std::string::npos) << bench.output;

  auto wrongInput = runSubprocess({tesselCli(), "run", dir.path() + "/m", "--input", dir.path() + "/m/params.bin"});
  EXPECT_EQ(wrongInput.exitCode, 1);
  EXPECT_NE(wrongInput.output.find("error: "), std::string::npos) << wrongInput.output;
  auto missing = runSubprocess({tesselCli(), "benchmark", dir.path() + "/none"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.output.find("none/graph.json"), std::string::npos) << missing.output;
}

TEST(ModuleCli, BenchmarkComparesModulesInAlternation) {
  Graph g = graph::testsupport::diagonalMatmulGraph();
  TempDir dir;
  buildGraph(g, dir.path() + "/a");
  buildGraph(g, dir.path() + "/b");
  auto both = runSubprocess({tesselCli(), "benchmark", dir.path() + "/a", "--compare", dir.path() + "/b", "--repeat", "3",
                             "--min-repeat-ms", "5"});
  ASSERT_TRUE(both.ok()) << both.output;
  EXPECT_NE(both.output.find("2 modules timed in alternation, 3 rounds"), std::string::npos) << both.output;
  // One row per module, the first one's ratios to itself (of the medians, and the rounds' own)
  // exactly 1.
  EXPECT_NE(both.output.find("/ first   round / first"), std::string::npos) << both.output;
  size_t first = both.output.find(dir.path() + "/a "), second = both.output.find(dir.path() + "/b ");
  ASSERT_NE(first, std::string::npos) << both.output;
  ASSERT_NE(second, std::string::npos) << both.output;
  EXPECT_LT(first, second);
  std::string firstRow = both.output.substr(first, both.output.find('\n', first) - first);
  EXPECT_EQ(firstRow.substr(firstRow.size() - 5), "1.000") << firstRow;

  auto missing = runSubprocess({tesselCli(), "benchmark", dir.path() + "/a", "--compare", dir.path() + "/none"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.output.find("none/graph.json"), std::string::npos) << missing.output;
  auto profiled = runSubprocess({tesselCli(), "benchmark", dir.path() + "/a", "--compare", dir.path() + "/b", "--profile"});
  EXPECT_EQ(profiled.exitCode, 1);
  EXPECT_NE(profiled.output.find("--profile"), std::string::npos) << profiled.output;
}

}  // namespace
