// The printer: every expression kind in the notation of TVM's compute-DAG printout, and
// statements as indented loops. These strings are what `tessel lower` shows users.
#include <gtest/gtest.h>

#include "ir/Printer.h"

using namespace tessel;
using namespace tessel::ir;

namespace {

class PrinterTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"}, i{"i"};
  Var f{"f", DataType::float32()};
  Buffer a = makeBuffer("A", DataType::float32(), {16}, BufferNode::Scope::Global);
  Buffer t = makeBuffer("T", DataType::float32(), {4, 3}, BufferNode::Scope::Local);
};

TEST_F(PrinterTest, Constants) {
  EXPECT_EQ(toString(Expr(42)), "42");
  EXPECT_EQ(toString(intImm(DataType::int32(), -3)), "-3");
  EXPECT_EQ(toString(intImm(DataType::int8(), 5)), "5int8");
  EXPECT_EQ(toString(intImm(DataType::uint8(), 200)), "200uint8");
  EXPECT_EQ(toString(intImm(DataType::boolean(), 1)), "True");
  EXPECT_EQ(toString(intImm(DataType::boolean(), 0)), "False");
  EXPECT_EQ(toString(Expr(0.5f)), "0.5f");
  EXPECT_EQ(toString(Expr(0.0f)), "0f");
  EXPECT_EQ(toString(floatImm(DataType::float16(), 1.5)), "1.5f16");
  EXPECT_EQ(toString(floatImm(DataType::float64(), 0.25)), "0.25");
}

TEST_F(PrinterTest, ArithmeticIsFullyParenthesized) {
  EXPECT_EQ(toString(x + y), "(x + y)");
  EXPECT_EQ(toString(x - y * Expr(2)), "(x - (y*2))");
  EXPECT_EQ(toString(f / Expr(2.0f)), "(f/2f)");
  EXPECT_EQ(toString(truncmod(x, Expr(3))), "(x % 3)");
  EXPECT_EQ(toString(floordiv(x, Expr(4))), "floordiv(x, 4)");
  EXPECT_EQ(toString(floormod(x, Expr(4))), "floormod(x, 4)");
  EXPECT_EQ(toString(min(x, y)), "min(x, y)");
  EXPECT_EQ(toString(max(f, Expr(0.0f))), "max(f, 0f)");
}

TEST_F(PrinterTest, LogicAndComparisons) {
  EXPECT_EQ(toString((x < y) && (x >= Expr(0))), "((x < y) && (x >= 0))");
  EXPECT_EQ(toString((x == y) || (x != y)), "((x == y) || (x != y))");
  EXPECT_EQ(toString(x <= y), "(x <= y)");
  EXPECT_EQ(toString(x > y), "(x > y)");
  EXPECT_EQ(toString(!(x < y)), "!(x < y)");
}

TEST_F(PrinterTest, SelectCastAndCalls) {
  EXPECT_EQ(toString(select(x < y, f, Expr(1.0f))), "select((x < y), f, 1f)");
  EXPECT_EQ(toString(ifThenElse(x < y, f, Expr(0.0f))), "if_then_else((x < y), f, 0f)");
  EXPECT_EQ(toString(cast(DataType::float16(), f)), "float16(f)");
  EXPECT_EQ(toString(call(Intrinsic::Exp, {f})), "exp(f)");
  EXPECT_EQ(toString(call(Intrinsic::Pow, {f, Expr(2.0f)})), "pow(f, 2f)");
  EXPECT_EQ(toString(call(Intrinsic::Sigmoid, {f})), "sigmoid(f)");
}

TEST_F(PrinterTest, ScalarsWidenedToVectorTypesAreBroadcasts) {
  EXPECT_EQ(toString(cast(DataType::float32(4), Expr(1.5f))), "broadcast(1.5f, 4)");
  EXPECT_EQ(toString(cast(DataType::float16(4), f)), "broadcast(float16(f), 4)");
  EXPECT_EQ(toString(select(broadcast(x < y, 4), Expr(1.0f), Expr(0.0f))),
            "select(broadcast((x < y), 4), broadcast(1f, 4), broadcast(0f, 4))");
}

TEST_F(PrinterTest, EveryIntrinsicHasItsName) {
  const std::pair<Intrinsic, const char*> names[] = {
      {Intrinsic::Exp, "exp"},     {Intrinsic::Log, "log"},     {Intrinsic::Sqrt, "sqrt"},   {Intrinsic::Tanh, "tanh"},
      {Intrinsic::Sigmoid, "sigmoid"}, {Intrinsic::Erf, "erf"}, {Intrinsic::Pow, "pow"},     {Intrinsic::Abs, "abs"},
      {Intrinsic::Floor, "floor"}, {Intrinsic::Ceil, "ceil"},   {Intrinsic::Round, "round"}, {Intrinsic::Rsqrt, "rsqrt"},
  };
  for (auto& [op, name] : names) EXPECT_STREQ(intrinsicName(op), name);
}

TEST_F(PrinterTest, TensorReadsLoadsAndVectors) {
  EXPECT_EQ(toString(producerLoad("A", DataType::float32(), {x, y + Expr(1)})), "A[x, (y + 1)]");
  EXPECT_EQ(toString(load(a, x * Expr(4))), "A[(x*4)]");
  EXPECT_EQ(toString(ramp(x, Expr(1), 8)), "ramp(x, 1, 8)");
  EXPECT_EQ(toString(broadcast(f, 16)), "broadcast(f, 16)");
  EXPECT_EQ(toString(load(a, ramp(x, Expr(1), 4))), "A[ramp(x, 1, 4)]");
}

TEST_F(PrinterTest, Reductions) {
  IterVar k{Var("k"), 8};
  Expr src = producerLoad("A", DataType::float32(), {k.var});
  EXPECT_EQ(toString(reduce(ReduceOp::Sum, src, {k})), "sum(A[k], axis=[k])");
  EXPECT_EQ(toString(reduce(ReduceOp::Max, src, {k}, k.var < Expr(4))), "max(A[k], axis=[k], where=(k < 4))");
  IterVar r{Var("r"), 2};
  EXPECT_EQ(toString(reduce(ReduceOp::Min, src, {k, r})), "min(A[k], axis=[k, r])");
}

TEST_F(PrinterTest, UndefinedExpression) { EXPECT_EQ(toString(Expr()), "<undefined>"); }

TEST_F(PrinterTest, LoopsAndStores) {
  Stmt s = makeFor(i, Expr(0), Expr(16), ForKind::Parallel, makeStore(a, i, load(a, i) * Expr(2.0f)));
  EXPECT_EQ(toString(s), "parallel i in range(16):\n  A[i] = (A[i]*2f)\n");
  Stmt v = makeFor(i, Expr(0), Expr(4), ForKind::Vectorized, makeStore(a, i, Expr(0.0f)));
  EXPECT_EQ(toString(v, 1), "  vectorized i in range(4):\n    A[i] = 0f\n");
  Stmt u = makeFor(i, Expr(0), Expr(2), ForKind::Unrolled, makeStore(a, i, Expr(0.0f)));
  EXPECT_EQ(toString(u), "unrolled i in range(2):\n  A[i] = 0f\n");
}

TEST_F(PrinterTest, LoopWithAConstantMinPrintsItsEnd) {
  Stmt s = makeFor(i, Expr(4), Expr(8), ForKind::Serial, makeStore(a, i, Expr(0.0f)));
  EXPECT_EQ(toString(s), "for i in range(4, 12):\n  A[i] = 0f\n");
  Stmt sym = makeFor(i, x, Expr(8), ForKind::Serial, makeStore(a, i, Expr(0.0f)));
  EXPECT_EQ(toString(sym), "for i in range(x, (x + 8)):\n  A[i] = 0f\n");
}

TEST_F(PrinterTest, ConditionalsAllocationsPragmasAndBlocks) {
  Stmt store = makeStore(t, i, Expr(1.0f));
  Stmt withElse = makeIf(i < Expr(3), store, makeStore(t, i, Expr(2.0f)));
  EXPECT_EQ(toString(withElse), "if (i < 3):\n  T[i] = 1f\nelse:\n  T[i] = 2f\n");
  Stmt alloc = makeAllocate(t, makeBlock({store, makePragma("auto_unroll_max_step", "16", store)}));
  EXPECT_EQ(toString(alloc), "allocate T[float32 * 12]\nT[i] = 1f\n// pragma auto_unroll_max_step = 16\nT[i] = 1f\n");
}

}  // namespace
