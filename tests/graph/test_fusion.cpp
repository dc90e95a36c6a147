#include <gtest/gtest.h>

#include "graph/Fusion.h"
#include "graph/TaskExtraction.h"
#include "graph/TestOps.h"
#include "support/Error.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::graph::testops;

namespace {

class FusionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { registerFusionTestOps(); }
};

runtime::Tensor constant(std::vector<int64_t> shape) { return runtime::Tensor::empty(std::move(shape), DataType::float32()); }

// add(matmul(x), transpose(x)): the add joins the matmul's group, created before the
// transpose's, and then reads the transpose: the groups must come out producers first.
TEST_F(FusionTest, GroupsComeAfterTheGroupsTheyRead) {
  Graph g;
  int x = g.addInput("x", {{4, 4}, DataType::float32()});
  int mm = g.addOp("fz_matmul", {x, g.addConstant("w", constant({4, 4}))});
  int tr = g.addOp("fz_transpose", {x});
  int add = g.addOp("fz_add", {mm, tr});
  g.markOutput(add);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].nodes, (std::vector<int>{tr}));
  EXPECT_EQ(groups[1].nodes, (std::vector<int>{mm, add}));
}

TEST_F(FusionTest, MatmulAbsorbsBiasAndActivation) {
  Graph g;
  int x = g.addInput("x", {{4, 8}, DataType::float32()});
  int w = g.addConstant("w", constant({8, 8}));
  int b = g.addConstant("b", constant({4, 8}));
  int mm = g.addOp("fz_matmul", {x, w});
  int add = g.addOp("fz_add", {mm, b});
  int relu = g.addOp("fz_relu", {add});
  g.markOutput(relu);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].nodes, (std::vector<int>{mm, add, relu}));
  EXPECT_EQ(groups[0].output, relu);
  EXPECT_EQ(groups[0].inputs, (std::vector<int>{x, w, b}));
  EXPECT_EQ(groups[0].pattern, OpPattern::OutEWiseFusable);
  auto dag = buildGroupDAG(g, groups[0]);
  EXPECT_EQ(dag.inputNames().size(), 3u);
  EXPECT_EQ(dag.ops().size(), 6u);  // three placeholders, three computes
  EXPECT_EQ(dag.flopCount(), 2.0 * 4 * 8 * 8 + 4 * 8 + 4 * 8);
}

TEST_F(FusionTest, SharedIntermediatesAreMaterialized) {
  // y = relu(x @ w); z = relu(y @ w + y): y has two readers, so it ends its group.
  Graph g;
  int x = g.addInput("x", {{8, 8}, DataType::float32()});
  int w = g.addConstant("w", constant({8, 8}));
  int y = g.addOp("fz_relu", {g.addOp("fz_matmul", {x, w})});
  int mm2 = g.addOp("fz_matmul", {y, w});
  int z = g.addOp("fz_relu", {g.addOp("fz_add", {mm2, y})});
  g.markOutput(z);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].output, y);
  EXPECT_EQ(groups[1].nodes.size(), 3u);
  EXPECT_EQ(groups[1].inputs, (std::vector<int>{y, w}));
  // The two functions compute different things, so their workload keys differ.
  EXPECT_NE(buildGroupDAG(g, groups[0]).workloadKey(), buildGroupDAG(g, groups[1]).workloadKey());
}

TEST_F(FusionTest, AnElementwiseDiamondJoinsAsAWhole) {
  // GELU's shape: y = matmul + bias read twice, relu(y) + y meeting again in one add; then a
  // relu after the meeting point joins as a chain.
  Graph g;
  int x = g.addInput("x", {{4, 8}, DataType::float32()});
  int w = g.addConstant("w", constant({8, 8}));
  int y = g.addOp("fz_add", {g.addOp("fz_matmul", {x, w}), g.addConstant("b", constant({4, 8}))});
  int side = g.addOp("fz_relu", {g.addOp("fz_relu", {y})});
  int meet = g.addOp("fz_add", {side, y});
  int after = g.addOp("fz_relu", {meet});
  g.markOutput(after);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].output, after);
  EXPECT_EQ(groups[0].nodes.size(), 6u);
  // Not when a path leaves the diamond through a heavy op, nor when a node inside it is a
  // graph output: then y is materialized as before.
  Graph h;
  int hx = h.addInput("x", {{4, 8}, DataType::float32()});
  int hw = h.addConstant("w", constant({8, 8}));
  int hy = h.addOp("fz_relu", {h.addOp("fz_matmul", {hx, hw})});
  int heavy = h.addOp("fz_matmul", {hy, hw});
  h.markOutput(h.addOp("fz_add", {heavy, hy}));
  auto split = fuseOperators(h);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].output, hy);
  Graph o;
  int ox = o.addInput("x", {{4, 8}, DataType::float32()});
  int oy = o.addOp("fz_relu", {o.addOp("fz_matmul", {ox, o.addConstant("w", constant({8, 8}))})});
  int visible = o.addOp("fz_relu", {oy});
  o.markOutput(visible);
  o.markOutput(o.addOp("fz_add", {visible, oy}));
  auto kept = fuseOperators(o);
  EXPECT_EQ(kept.size(), 3u);
}

TEST_F(FusionTest, HeavyOpsDoNotFuseWithEachOther) {
  Graph g;
  int x = g.addInput("x", {{8, 8}, DataType::float32()});
  int w = g.addConstant("w", constant({8, 8}));
  int a = g.addOp("fz_matmul", {x, w});
  int b = g.addOp("fz_matmul", {a, w});
  g.markOutput(b);
  EXPECT_EQ(fuseOperators(g).size(), 2u);
}

TEST_F(FusionTest, InjectiveChainsFuseButNotIntoAHeavyOp) {
  Graph g;
  int x = g.addInput("x", {{4, 8}, DataType::float32()});
  int t = g.addOp("fz_transpose", {x});
  int r = g.addOp("fz_relu", {t});
  int t2 = g.addOp("fz_transpose", {r});
  int w = g.addConstant("w", constant({8, 8}));
  int mm = g.addOp("fz_matmul", {t2, w});
  int tm = g.addOp("fz_transpose", {mm});
  g.markOutput(tm);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].nodes, (std::vector<int>{t, r, t2}));
  EXPECT_EQ(groups[0].pattern, OpPattern::Injective);
  EXPECT_EQ(groups[1].nodes, std::vector<int>{mm});
  EXPECT_EQ(groups[2].nodes, std::vector<int>{tm});
}

TEST_F(FusionTest, GraphOutputsStayVisibleAndFusionCanBeOff) {
  Graph g;
  int x = g.addInput("x", {{4, 4}, DataType::float32()});
  int a = g.addOp("fz_relu", {x});
  int b = g.addOp("fz_relu", {a});
  g.markOutput(a);
  g.markOutput(b);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].inputs, std::vector<int>{a});
  Graph chain;
  int cx = chain.addInput("x", {{4, 4}, DataType::float32()});
  chain.markOutput(chain.addOp("fz_relu", {chain.addOp("fz_relu", {cx})}));
  EXPECT_EQ(fuseOperators(chain, true).size(), 1u);
  EXPECT_EQ(fuseOperators(chain, false).size(), 2u);
}

}  // namespace

namespace {

TEST_F(FusionTest, EqualFunctionsAreOneTaskWithAWeight) {
  // Three matmul+relu blocks, two of them on equal shapes, then a transpose (no arithmetic).
  Graph g;
  int x = g.addInput("x", {{4, 8}, DataType::float32()});
  int w = g.addConstant("w", constant({8, 8}));
  int a = g.addOp("fz_relu", {g.addOp("fz_matmul", {x, w})});
  int b = g.addOp("fz_relu", {g.addOp("fz_matmul", {a, w})});
  int w2 = g.addConstant("w2", constant({8, 16}));
  int c = g.addOp("fz_relu", {g.addOp("fz_matmul", {b, w2})});
  g.markOutput(g.addOp("fz_transpose", {c}));
  auto tasks = extractTasks(g);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].weight, 2);
  EXPECT_EQ(tasks[0].groups, (std::vector<int>{0, 1}));
  EXPECT_EQ(tasks[0].flops, 2.0 * 4 * 8 * 8 + 4 * 8);
  EXPECT_EQ(tasks[1].weight, 1);
  EXPECT_EQ(extractTasks(g, true).size(), 3u);
  // Numbered from 1, as `tessel tasks` and `tessel tune --tasks` number tasks (issue 39, defect
  // 14: the listing started at 0), or by the numbers given.
  std::string text = formatTasks(tasks);
  EXPECT_EQ(text.rfind("========== Task 1  (workload key: " + tasks[0].workloadKey + ") ==========\n", 0), 0u) << text;
  EXPECT_NE(text.find("========== Task 2  (workload key: "), std::string::npos);
  EXPECT_NE(text.find("T_matmul(i0, i1) += "), std::string::npos) << text;
  std::string numbered = formatTasks(tasks, {7, 9});
  EXPECT_EQ(numbered.rfind("========== Task 7  (workload key: ", 0), 0u) << numbered;
  EXPECT_NE(numbered.find("========== Task 9  (workload key: "), std::string::npos);
}

}  // namespace

// A chain marked fuse_into_reader (the VTA flow's residual shortcut: cast to int32, left shift)
// leaves its producer's group, even where it is the producer's only reader, and joins the group
// of its own only reader: z = matmul(y, w) + s(s(relu(x @ w))).
TEST_F(FusionTest, ChainsMarkedFuseIntoReaderJoinTheirReadersGroup) {
  Graph g;
  int x = g.addInput("x", {{4, 4}, DataType::float32()});
  int w = g.addConstant("w", constant({4, 4}));
  int y = g.addInput("y", {{4, 4}, DataType::float32()});
  int mm = g.addOp("fz_matmul", {x, w});
  int relu = g.addOp("fz_relu", {mm});
  int first = g.addOp("fz_relu", {relu}, Attrs{{"fuse_into_reader", true}});
  int second = g.addOp("fz_relu", {first}, Attrs{{"fuse_into_reader", true}});
  int mm2 = g.addOp("fz_matmul", {y, w});
  int add = g.addOp("fz_add", {mm2, second});
  g.markOutput(add);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].nodes, (std::vector<int>{mm, relu}));
  EXPECT_EQ(groups[1].nodes, (std::vector<int>{first, second, mm2, add}));
  EXPECT_EQ(groups[1].output, add);
  EXPECT_EQ(groups[1].inputs, (std::vector<int>{relu, y, w}));
  // Built as one function: the chain computed from the first group's output.
  EXPECT_EQ(buildGroupDAG(g, groups[1]).inputNames().size(), 3u);
  // Unfused, every node is its own group still.
  EXPECT_EQ(fuseOperators(g, false).size(), 6u);
}

// A marked chain read by two, or that is a graph output, stays a group of its own.
TEST_F(FusionTest, MarkedChainsWithoutOneReaderStayApart) {
  Graph g;
  int x = g.addInput("x", {{4, 4}, DataType::float32()});
  int w = g.addConstant("w", constant({4, 4}));
  int mm = g.addOp("fz_matmul", {x, w});
  int chain = g.addOp("fz_relu", {mm}, Attrs{{"fuse_into_reader", true}});
  int a = g.addOp("fz_add", {chain, mm});
  int b = g.addOp("fz_relu", {chain});
  g.markOutput(a);
  g.markOutput(b);
  auto groups = fuseOperators(g);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[1].nodes, (std::vector<int>{chain}));
}
