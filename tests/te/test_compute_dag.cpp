// Tensor expressions and the ComputeDAG: construction checks, reduction identities,
// topological order, unique names, access analysis, FLOP counting and the workload key.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/ErrorText.h"
#include "ir/Printer.h"
#include "te/ComputeDAG.h"

using namespace tessel;
using namespace tessel::te;
using namespace tessel::testsupport;

namespace {

/// C[i, j] = sum_k A[i, k] * B[k, j] with the names the caller chooses.
ComputeDAG matmulNamed(int64_t m, int64_t n, int64_t k, const std::string& a, const std::string& b, const std::string& c,
                       const std::string& axis = "k", DataType dtype = DataType::float32()) {
  auto A = placeholder({m, k}, dtype, a);
  auto B = placeholder({k, n}, dtype, b);
  auto rk = reduceAxis(k, axis);
  auto C = compute({m, n}, [&](const std::vector<Var>& i) { return sum(A(i[0], rk.var) * B(rk.var, i[1]), {rk}); }, c);
  return ComputeDAG({C}, {A, B});
}

// ---- construction -------------------------------------------------------------------------

TEST(Tensor, PlaceholderAndComputeCarryShapeDtypeAndAxes) {
  auto A = placeholder({4, 5}, DataType::int8(), "A");
  EXPECT_EQ(A.name(), "A");
  EXPECT_EQ(A.dtype(), DataType::int8());
  EXPECT_EQ(A.ndim(), 2);
  auto B = compute({4, 5}, [&](const std::vector<Var>& i) { return ir::cast(DataType::int32(), A(i[0], i[1])); }, "B", "elemwise",
                   {"row", "col"});
  EXPECT_EQ(B.dtype(), DataType::int32());
  ASSERT_EQ(B.op()->axes.size(), 2u);
  EXPECT_EQ(B.op()->axes[0].var.name(), "row");
  EXPECT_EQ(B.op()->axes[1].extent, 5);
  EXPECT_EQ(B.op()->tag, "elemwise");
  auto C = compute({4}, [&](const std::vector<Var>& i) { return B(i[0], Expr(0)); }, "C");
  EXPECT_EQ(C.op()->axes[0].var.name(), "i0");  // default axis names
}

TEST(Tensor, ComparisonBodyMakesABoolTensor) {
  auto A = placeholder({3}, DataType::float32(), "A");
  auto M = compute({3}, [&](const std::vector<Var>& i) { return A(i[0]) > Expr(0.5f); }, "M");
  EXPECT_EQ(M.dtype(), DataType::boolean());
}

TEST(Tensor, NarrowIndicesAreWidenedToTheIndexType) {
  auto A = placeholder({8}, DataType::float32(), "A");
  Var n("n", DataType::int32());
  Expr read = A(n);
  auto p = read.as<ir::ProducerLoadNode>();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->indices[0].type(), DataType::int64());
}

TEST(Tensor, BadShapesAndIndicesAreRejectedWithTheTensorName) {
  expectContains(errorOf([] { placeholder({4, 0}, DataType::float32(), "W"); }), "'W'");
  expectContains(errorOf([] { placeholder({4, -2}, DataType::float32(), "W"); }), "extent -2");
  expectContains(errorOf([] { placeholder({4}, DataType::float32(4), "V"); }), "vector dtype");
  auto A = placeholder({4, 4}, DataType::float32(), "A");
  expectContains(errorOf([&] { A(Expr(1)); }), "'A' has 2 dimensions but was indexed with 1");
  expectContains(errorOf([&] { A(Expr(1.0f), Expr(0)); }), "indexed with a float32");
  expectContains(errorOf([] { reduceAxis(0, "r"); }), "'r'");
  expectContains(errorOf([&] { compute({4}, [&](const std::vector<Var>& i) { return A(i[0], i[0]); }, "D", "", {"a", "b"}); }),
                 "2 axis names for 1 dimensions");
}

// ---- reductions ---------------------------------------------------------------------------

TEST(Reduction, IdentityElements) {
  using ir::ReduceOp;
  auto value = [](ReduceOp op, DataType t) {
    Expr e = ir::reduceIdentity(op, t);
    EXPECT_EQ(e.type(), t);
    if (auto f = e.as<ir::FloatImmNode>()) return f->value;
    return double(e.as<ir::IntImmNode>()->value);
  };
  EXPECT_EQ(value(ReduceOp::Sum, DataType::float32()), 0.0);
  EXPECT_EQ(value(ReduceOp::Max, DataType::float32()), -INFINITY);
  EXPECT_EQ(value(ReduceOp::Min, DataType::float32()), INFINITY);
  EXPECT_EQ(value(ReduceOp::Max, DataType::float16()), -INFINITY);
  EXPECT_EQ(value(ReduceOp::Sum, DataType::int32()), 0.0);
  EXPECT_EQ(value(ReduceOp::Max, DataType::int8()), -128.0);
  EXPECT_EQ(value(ReduceOp::Min, DataType::int8()), 127.0);
  EXPECT_EQ(value(ReduceOp::Max, DataType::uint8()), 0.0);
  EXPECT_EQ(value(ReduceOp::Min, DataType::uint8()), 255.0);
  EXPECT_EQ(value(ReduceOp::Max, DataType::int32()), double(std::numeric_limits<int32_t>::min()));
  EXPECT_EQ(value(ReduceOp::Min, DataType::int32()), double(std::numeric_limits<int32_t>::max()));
  EXPECT_EQ(ir::reduceIdentity(ReduceOp::Max, DataType::int64()).as<ir::IntImmNode>()->value, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ir::reduceIdentity(ReduceOp::Min, DataType::int64()).as<ir::IntImmNode>()->value, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(value(ReduceOp::Max, DataType::boolean()), 0.0);
  EXPECT_EQ(value(ReduceOp::Min, DataType::boolean()), 1.0);
}

TEST(Reduction, CombineMatchesTheOperator) {
  Var a("a", DataType::float32()), b("b", DataType::float32());
  EXPECT_EQ(ir::toString(ir::reduceCombine(ir::ReduceOp::Sum, a, b)), "(a + b)");
  EXPECT_EQ(ir::toString(ir::reduceCombine(ir::ReduceOp::Max, a, b)), "max(a, b)");
  EXPECT_EQ(ir::toString(ir::reduceCombine(ir::ReduceOp::Min, a, b)), "min(a, b)");
}

TEST(Reduction, SumMaxMinBuildReduceNodes) {
  auto A = placeholder({4, 6}, DataType::float32(), "A");
  auto k = reduceAxis(6, "k");
  for (auto [buildReduce, op] : {std::pair{&te::sum, ir::ReduceOp::Sum}, std::pair{&te::max, ir::ReduceOp::Max},
                                 std::pair{&te::min, ir::ReduceOp::Min}}) {
    auto build = buildReduce;  // a lambda cannot capture a structured binding before clang 16
    auto R = compute({4}, [&](const std::vector<Var>& i) { return build(A(i[0], k.var), {k}, Expr()); }, "R");
    ASSERT_NE(R.op()->reduction(), nullptr);
    EXPECT_EQ(R.op()->reduction()->op, op);
    EXPECT_EQ(R.op()->reduction()->axes[0].extent, 6);
  }
  expectContains(errorOf([&] { te::sum(A(Expr(0), Expr(0)), {}); }), "at least one reduction axis");
}

TEST(Reduction, MustBeTheWholeBody) {
  auto A = placeholder({4, 6}, DataType::float32(), "A");
  auto k = reduceAxis(6, "k");
  auto R = compute({4}, [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var), {k}) * Expr(2.0f); }, "R");
  expectContains(errorOf([&] { ComputeDAG dag({R}); }), "compute 'R': a reduction must be the whole body");
}

// ---- the DAG ------------------------------------------------------------------------------

TEST(ComputeDAG, OpsAreInTopologicalOrder) {
  // A diamond: P feeds Q and R, both feed S.
  auto A = placeholder({8}, DataType::float32(), "A");
  auto P = compute({8}, [&](const std::vector<Var>& i) { return A(i[0]) + Expr(1.0f); }, "P");
  auto Q = compute({8}, [&](const std::vector<Var>& i) { return P(i[0]) * Expr(2.0f); }, "Q");
  auto R = compute({8}, [&](const std::vector<Var>& i) { return P(i[0]) * Expr(3.0f); }, "R");
  auto S = compute({8}, [&](const std::vector<Var>& i) { return Q(i[0]) + R(i[0]); }, "S");
  ComputeDAG dag({S});
  ASSERT_EQ(dag.ops().size(), 5u);
  for (auto& op : dag.ops())
    for (auto& access : ComputeDAG::accesses(*op))
      EXPECT_LT(dag.opIndex(access.producer), dag.opIndex(op->name)) << access.producer << " must come before " << op->name;
  EXPECT_EQ(dag.ops().back()->name, "S");
  EXPECT_EQ(dag.inputNames(), std::vector<std::string>{"A"});
  EXPECT_EQ(dag.outputNames(), std::vector<std::string>{"S"});
  EXPECT_TRUE(dag.isOutput("S"));
  EXPECT_FALSE(dag.isOutput("P"));
  EXPECT_EQ(dag.opIndex("nope"), -1);
  expectContains(errorOf([&] { dag.op("nope"); }), "no tensor named 'nope'");
}

TEST(ComputeDAG, InputsFollowTheGivenOrderThenFirstUse) {
  auto A = placeholder({4}, DataType::float32(), "A");
  auto B = placeholder({4}, DataType::float32(), "B");
  auto C = placeholder({4}, DataType::float32(), "C");
  auto D = compute({4}, [&](const std::vector<Var>& i) { return A(i[0]) + B(i[0]) + C(i[0]); }, "D");
  EXPECT_EQ(ComputeDAG({D}, {C, A}).inputNames(), (std::vector<std::string>{"C", "A", "B"}));
  EXPECT_EQ(ComputeDAG({D}).inputNames(), (std::vector<std::string>{"A", "B", "C"}));
}

TEST(ComputeDAG, DuplicateNamesAreMadeUniqueAndReadsFollow) {
  auto first = placeholder({4}, DataType::float32(), "data");
  auto second = placeholder({4}, DataType::float32(), "data");
  auto out = compute({4}, [&](const std::vector<Var>& i) { return first(i[0]) - second(i[0]); }, "data");
  ComputeDAG dag({out}, {first, second});
  EXPECT_EQ(dag.inputNames(), (std::vector<std::string>{"data", "data_1"}));
  EXPECT_EQ(dag.outputNames(), std::vector<std::string>{"data_2"});
  EXPECT_EQ(ir::toString(dag.op("data_2")->body), "(data[i0] - data_1[i0])");
}

TEST(ComputeDAG, OutputsMustBeComputations) {
  auto A = placeholder({4}, DataType::float32(), "A");
  expectContains(errorOf([&] { ComputeDAG dag({A}); }), "output 'A' is a placeholder");
  expectContains(errorOf([] { ComputeDAG dag(std::vector<Tensor>{}); }), "at least one output");
}

TEST(ComputeDAG, AccessAnalysisListsEveryRead) {
  auto dag = matmulNamed(4, 5, 6, "A", "B", "C");
  auto accesses = ComputeDAG::accesses(*dag.op("C"));
  ASSERT_EQ(accesses.size(), 2u);
  EXPECT_EQ(accesses[0].producer, "A");
  EXPECT_EQ(ir::toString(accesses[0].indices[0]), "i0");
  EXPECT_EQ(ir::toString(accesses[0].indices[1]), "k");
  EXPECT_EQ(accesses[1].producer, "B");
  EXPECT_EQ(ir::toString(accesses[1].indices[0]), "k");
  EXPECT_TRUE(ComputeDAG::accesses(*dag.op("A")).empty());
  EXPECT_EQ(dag.consumers("A"), std::vector<std::string>{"C"});
  EXPECT_TRUE(dag.consumers("C").empty());
}

TEST(ComputeDAG, AccessAnalysisSeesReadsInsideIndicesAndConditions) {
  auto idx = placeholder({4}, DataType::int32(), "idx");
  auto table = placeholder({10}, DataType::float32(), "table");
  auto gather = compute({4}, [&](const std::vector<Var>& i) {
    return ir::ifThenElse(idx(i[0]) >= ir::intImm(DataType::int32(), 0), table(idx(i[0])), Expr(0.0f));
  }, "gather");
  ComputeDAG dag({gather});
  std::vector<std::string> producers;
  for (auto& a : ComputeDAG::accesses(*dag.op("gather"))) producers.push_back(a.producer);
  EXPECT_EQ(producers, (std::vector<std::string>{"idx", "table", "idx"}));
  EXPECT_EQ(dag.inputNames(), (std::vector<std::string>{"idx", "table"}));
}

TEST(ComputeDAG, PrintsOneLinePerOp) {
  auto dag = matmulNamed(4, 5, 6, "A", "B", "C");
  EXPECT_EQ(dag.toString(), "A = PLACEHOLDER [4, 6]\nB = PLACEHOLDER [6, 5]\nC(i0, i1) += (A[i0, k]*B[k, i1])\n");
  auto A = placeholder({3}, DataType::float32(), "A");
  auto k = reduceAxis(3, "k");
  auto M = compute({1}, [&](const std::vector<Var>&) { return te::max(A(k.var), {k}, k.var < Expr(2)); }, "M");
  EXPECT_EQ(operationToString(*ComputeDAG({M}).op("M")), "M(i0) max= A[k] where (k < 2)");
}

// ---- FLOPs --------------------------------------------------------------------------------

TEST(Flops, MultiplyAddCountsTwo) {
  EXPECT_EQ(matmulNamed(16, 32, 8, "A", "B", "C").flopCount(), 2.0 * 16 * 32 * 8);
}

TEST(Flops, Conv2dCountsItsMultiplyAddsOnly) {
  // conv2d NCHW, 1x3x8x8 input, 4 filters 3x3, stride 1, no padding: 6x6 output.
  auto data = placeholder({1, 3, 8, 8}, DataType::float32(), "data");
  auto weight = placeholder({4, 3, 3, 3}, DataType::float32(), "weight");
  auto rc = reduceAxis(3, "rc"), ry = reduceAxis(3, "ry"), rx = reduceAxis(3, "rx");
  auto conv = compute({1, 4, 6, 6}, [&](const std::vector<Var>& i) {
    return sum(data(i[0], rc.var, i[2] + ry.var, i[3] + rx.var) * weight(i[1], rc.var, ry.var, rx.var), {rc, ry, rx});
  }, "conv");
  EXPECT_EQ(ComputeDAG({conv}).flopCount(), 2.0 * 1 * 4 * 6 * 6 * 3 * 3 * 3);
}

TEST(Flops, ElementwiseIntrinsicsAndCastsCount) {
  auto A = placeholder({10}, DataType::float32(), "A");
  // max(a, 0): 1 op; exp(a - 1): 2 ops; a cast alone: 0 ops; pure index arithmetic: 0 ops.
  auto relu = compute({10}, [&](const std::vector<Var>& i) { return ir::max(A(i[0]), Expr(0.0f)); }, "relu");
  auto e = compute({10}, [&](const std::vector<Var>& i) { return ir::call(ir::Intrinsic::Exp, {A(i[0]) - Expr(1.0f)}); }, "e");
  auto c = compute({10}, [&](const std::vector<Var>& i) { return ir::cast(DataType::float16(), A(i[0])); }, "c");
  auto shift = compute({5}, [&](const std::vector<Var>& i) { return A(i[0] * Expr(2) + Expr(1)); }, "shift");
  EXPECT_EQ(ComputeDAG({relu}).flopCount(), 10.0);
  EXPECT_EQ(ComputeDAG({e}).flopCount(), 20.0);
  EXPECT_EQ(ComputeDAG({c}).flopCount(), 0.0);
  EXPECT_EQ(ComputeDAG({shift}).flopCount(), 0.0);
}

TEST(Flops, ReductionsCountTheCombineAndSumOverOps) {
  auto A = placeholder({4, 6}, DataType::float32(), "A");
  auto k = reduceAxis(6, "k");
  auto R = compute({4}, [&](const std::vector<Var>& i) { return te::max(A(i[0], k.var), {k}); }, "R");
  auto S = compute({4}, [&](const std::vector<Var>& i) { return R(i[0]) * Expr(2.0f); }, "S");
  ComputeDAG dag({S});
  EXPECT_EQ(operationFlops(*dag.op("R")), 24.0);
  EXPECT_EQ(operationFlops(*dag.op("A")), 0.0);
  EXPECT_EQ(dag.flopCount(), 24.0 + 4.0);
}

// ---- workload key -------------------------------------------------------------------------

TEST(WorkloadKey, IndependentOfNames) {
  auto a = matmulNamed(16, 32, 8, "A", "B", "C", "k");
  auto b = matmulNamed(16, 32, 8, "data", "weight", "out", "reduce_k");
  EXPECT_EQ(a.workloadKey(), b.workloadKey());
  EXPECT_EQ(a.workloadKey().size(), 32u);
  EXPECT_EQ(a.workloadKey(), matmulNamed(16, 32, 8, "A", "B", "C").workloadKey());  // stable across builds
}

TEST(WorkloadKey, DiffersForShapesOpsAndDtypes) {
  std::string base = matmulNamed(16, 32, 8, "A", "B", "C").workloadKey();
  EXPECT_NE(base, matmulNamed(16, 32, 9, "A", "B", "C").workloadKey());
  EXPECT_NE(base, matmulNamed(32, 16, 8, "A", "B", "C").workloadKey());
  EXPECT_NE(base, matmulNamed(16, 32, 8, "A", "B", "C", "k", DataType::int8()).workloadKey());
  auto A = placeholder({16, 8}, DataType::float32(), "A");
  auto B = placeholder({8, 32}, DataType::float32(), "B");
  auto k = reduceAxis(8, "k");
  auto maxPlus = compute({16, 32}, [&](const std::vector<Var>& i) { return te::max(A(i[0], k.var) + B(k.var, i[1]), {k}); }, "C");
  auto sumPlus = compute({16, 32}, [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var) + B(k.var, i[1]), {k}); }, "C");
  auto transposed = compute({16, 32}, [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); }, "C");
  EXPECT_NE(ComputeDAG({maxPlus}, {A, B}).workloadKey(), ComputeDAG({sumPlus}, {A, B}).workloadKey());
  EXPECT_NE(ComputeDAG({sumPlus}, {A, B}).workloadKey(), base);
  EXPECT_EQ(ComputeDAG({transposed}, {A, B}).workloadKey(), base);
}

TEST(WorkloadKey, DiffersForConstantsAndIndexing) {
  auto A = placeholder({8}, DataType::float32(), "A");
  auto plus1 = compute({8}, [&](const std::vector<Var>& i) { return A(i[0]) + Expr(1.0f); }, "B");
  auto plus2 = compute({8}, [&](const std::vector<Var>& i) { return A(i[0]) + Expr(2.0f); }, "B");
  auto reversed = compute({8}, [&](const std::vector<Var>& i) { return A(Expr(7) - i[0]) + Expr(1.0f); }, "B");
  std::string k1 = ComputeDAG({plus1}).workloadKey();
  EXPECT_NE(k1, ComputeDAG({plus2}).workloadKey());
  EXPECT_NE(k1, ComputeDAG({reversed}).workloadKey());
}

}  // namespace
