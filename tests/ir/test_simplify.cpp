// The simplifier: constant folding, the canonical linear form of index arithmetic, floor
// division and modulo resolved by bounds, min/max and comparisons decided by bounds, ramp and
// broadcast folding, and guard/loop removal in statements. Expected forms are compared as
// printed text, which pins down both the value and the canonical shape.
#include <gtest/gtest.h>

#include <limits>

#include "ir/Mutator.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"

using namespace tessel;
using namespace tessel::ir;

namespace {

std::string simplified(const Expr& e, const VarBounds& bounds = {}) { return toString(simplify(e, bounds)); }

int64_t constantOf(const Expr& e) {
  auto value = asConstInt(e);
  EXPECT_NE(value, nullptr) << toString(e) << " is not a constant";
  return value ? *value : -999999;
}

/// Counts the IfThenElse statements and For loops of a statement.
struct StmtCounts {
  int ifs = 0, loops = 0, stores = 0;
};
StmtCounts count(const Stmt& s) {
  struct Counter : IRVisitor {
    StmtCounts c;
    void visit(const Stmt& x) override {
      if (x.defined()) {
        c.ifs += x.kind() == StmtKind::IfThenElse;
        c.loops += x.kind() == StmtKind::For;
        c.stores += x.kind() == StmtKind::Store;
      }
      IRVisitor::visit(x);
    }
    using IRVisitor::visit;
  } counter;
  counter.visit(s);
  return counter.c;
}

class SimplifyTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"}, z{"z"};
  Var f{"f", DataType::float32()};
};

// ---- constant folding ----------------------------------------------------------------------

TEST_F(SimplifyTest, FoldsIntegerConstants) {
  EXPECT_EQ(constantOf(simplify(Expr(3) + Expr(4) * Expr(5))), 23);
  EXPECT_EQ(constantOf(simplify(Expr(3) - Expr(10))), -7);
  EXPECT_EQ(constantOf(simplify(min(Expr(3), Expr(-2)))), -2);
  EXPECT_EQ(constantOf(simplify(max(Expr(3), Expr(-2)))), 3);
}

TEST_F(SimplifyTest, FoldsDivisionAndModuloWithTheirRoundingRules) {
  // Floor division rounds toward minus infinity; truncating division toward zero.
  EXPECT_EQ(constantOf(simplify(floordiv(Expr(-7), Expr(2)))), -4);
  EXPECT_EQ(constantOf(simplify(floormod(Expr(-7), Expr(2)))), 1);
  EXPECT_EQ(constantOf(simplify(floordiv(Expr(7), Expr(-2)))), -4);
  EXPECT_EQ(constantOf(simplify(floormod(Expr(7), Expr(-2)))), -1);
  EXPECT_EQ(constantOf(simplify(truncdiv(Expr(-7), Expr(2)))), -3);
  EXPECT_EQ(constantOf(simplify(truncmod(Expr(-7), Expr(2)))), -1);
}

TEST_F(SimplifyTest, DoesNotFoldDivisionThatTraps) {
  Expr e = simplify(floordiv(Expr(7), Expr(0)));
  EXPECT_EQ(e.kind(), ExprKind::FloorDiv);
  EXPECT_EQ(simplify(truncmod(Expr(7), Expr(0))).kind(), ExprKind::Mod);
  // INT64_MIN / -1 overflows (and traps on x86): it must not be folded on the host either.
  Expr lowest(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(simplify(truncdiv(lowest, Expr(-1))).kind(), ExprKind::Div);
  EXPECT_EQ(simplify(floormod(lowest, Expr(-1))).kind(), ExprKind::FloorMod);
}

TEST_F(SimplifyTest, FoldedNarrowIntegersWrapAround) {
  Expr sum = simplify(intImm(DataType::int8(), 100) + intImm(DataType::int8(), 100));
  EXPECT_EQ(sum.type(), DataType::int8());
  EXPECT_EQ(constantOf(sum), -56);
  Expr big = simplify(intImm(DataType::int32(), std::numeric_limits<int32_t>::max()) + intImm(DataType::int32(), 1));
  EXPECT_EQ(constantOf(big), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(constantOf(simplify(intImm(DataType::uint8(), 250) + intImm(DataType::uint8(), 10))), 4);
}

TEST_F(SimplifyTest, FoldsComparisonsToBool) {
  Expr lt = simplify(Expr(3) < Expr(4));
  EXPECT_EQ(lt.type(), DataType::boolean());
  EXPECT_TRUE(isConstInt(lt, 1));
  EXPECT_TRUE(isConstInt(simplify(Expr(3) == Expr(4)), 0));
  EXPECT_TRUE(isConstInt(simplify(Expr(2.5f) > Expr(1.0f)), 1));
  EXPECT_TRUE(isConstInt(simplify(!(Expr(1) < Expr(2))), 0));
}

TEST_F(SimplifyTest, FoldsFloatConstantsInTheirPrecision) {
  Expr e = simplify(Expr(0.1f) + Expr(0.2f));
  ASSERT_NE(e.as<FloatImmNode>(), nullptr);
  EXPECT_EQ(e.as<FloatImmNode>()->value, double(0.1f + 0.2f));
  Expr p = simplify(Expr(1.5f) * Expr(2.0f));
  EXPECT_EQ(p.as<FloatImmNode>()->value, 3.0);
}

TEST_F(SimplifyTest, RemovesFloatIdentities) {
  EXPECT_TRUE(simplify(f + Expr(0.0f)).sameAs(f));
  EXPECT_TRUE(simplify(Expr(0.0f) + f).sameAs(f));
  EXPECT_TRUE(simplify(f * Expr(1.0f)).sameAs(f));
  EXPECT_TRUE(simplify(f / Expr(1.0f)).sameAs(f));
  // x * 0 is not 0 for floats (NaN, infinity), so it stays.
  EXPECT_EQ(simplified(f * Expr(0.0f)), "(f*0f)");
}

TEST_F(SimplifyTest, FoldsLogicWithAConstantSide) {
  Expr c = x < Expr(3);
  EXPECT_EQ(simplified(c && (Expr(1) < Expr(2))), "(x < 3)");
  EXPECT_TRUE(isConstInt(simplify(c && (Expr(2) < Expr(1))), 0));
  EXPECT_TRUE(isConstInt(simplify(c || (Expr(1) < Expr(2))), 1));
}

TEST_F(SimplifyTest, FoldsCastsOfConstants) {
  Expr e = simplify(cast(DataType::int32(), Expr(2) + Expr(3)));
  EXPECT_EQ(e.type(), DataType::int32());
  EXPECT_EQ(constantOf(e), 5);
  Expr truncated = simplify(cast(DataType::int32(), Expr(2.75f) + Expr(0.0f)));
  EXPECT_EQ(constantOf(truncated), 2);
  Expr toFloat = simplify(cast(DataType::float32(), Expr(2) + Expr(3)));
  ASSERT_NE(toFloat.as<FloatImmNode>(), nullptr);
  EXPECT_EQ(toFloat.as<FloatImmNode>()->value, 5.0);
}

TEST_F(SimplifyTest, WideningCastOfANarrowingCastKeepsTheWrapAround) {
  // int64(uint8(x)) is x only where x fits in uint8; elsewhere it wraps.
  Expr e = cast(DataType::int64(), cast(DataType::uint8(), x));
  Expr wide = simplify(e, {{x.node(), Interval{0, 300}}});
  EXPECT_NE(toString(wide), "x");
  EXPECT_EQ(simplified(e, {{x.node(), Interval{0, 200}}}), "x");
  EXPECT_NE(simplified(cast(DataType::int64(), cast(DataType::int32(), x))), "x");
}

// ---- linear canonical form -----------------------------------------------------------------

TEST_F(SimplifyTest, CollectsLikeTerms) {
  EXPECT_EQ(simplified((x + y) - x), "y");
  EXPECT_EQ(simplified(x * Expr(2) + x * Expr(3)), "(x*5)");
  EXPECT_EQ(simplified((x + Expr(1)) * Expr(3) - Expr(3)), "(x*3)");
  EXPECT_TRUE(isConstInt(simplify(x - x), 0));
  EXPECT_TRUE(isConstInt(simplify((x * Expr(4) + y) - (y + x * Expr(4))), 0));
}

TEST_F(SimplifyTest, PutsTheConstantLastAndFoldsIt) {
  EXPECT_EQ(simplified(Expr(3) + x), "(x + 3)");
  EXPECT_EQ(simplified((x + Expr(2)) + Expr(5)), "(x + 7)");
  EXPECT_EQ(simplified((x + Expr(2)) - Expr(5)), "(x - 3)");
  EXPECT_EQ(simplified(Expr(2) - x), "((0 - x) + 2)");
  EXPECT_EQ(simplified(x * Expr(4) + y * Expr(-2) + Expr(1)), "(((x*4) - (y*2)) + 1)");
}

TEST_F(SimplifyTest, KeepsProductsOfVariables) {
  EXPECT_EQ(simplified(x * y), "(x*y)");
  EXPECT_EQ(simplified(x * y + x * y), "((x*y)*2)");
}

TEST_F(SimplifyTest, LeavesNonIndexIntegersToConstantFolding) {
  // int32 data arithmetic is not canonicalized (its wrap-around differs from int64).
  Var a("a", DataType::int32());
  EXPECT_EQ(simplified((a + Expr(1)) - Expr(1)), "((a + 1) - 1)");
}

// ---- floor division and modulo -------------------------------------------------------------

TEST_F(SimplifyTest, DivModResolvedWhenTheRemainderIsBounded) {
  VarBounds b{{y.node(), Interval{0, 7}}};
  EXPECT_EQ(simplified(floordiv(x * Expr(8) + y, Expr(8)), b), "x");
  EXPECT_EQ(simplified(floormod(x * Expr(8) + y, Expr(8)), b), "y");
  EXPECT_EQ(simplified(floordiv(x * Expr(16) + y * Expr(2), Expr(16)), b), "x");
}

TEST_F(SimplifyTest, DivModPullsOutMultiplesWhenTheRemainderIsUnbounded) {
  EXPECT_EQ(simplified(floordiv(x * Expr(8) + y, Expr(8))), "(x + floordiv(y, 8))");
  EXPECT_EQ(simplified(floormod(x * Expr(8) + y, Expr(8))), "floormod(y, 8)");
  EXPECT_EQ(simplified(floordiv(x * Expr(8) + Expr(3), Expr(8))), "x");
  EXPECT_EQ(simplified(floormod(x * Expr(8) + Expr(3), Expr(8))), "3");
  EXPECT_EQ(simplified(floordiv(x * Expr(8) - Expr(1), Expr(8))), "(x - 1)");
  EXPECT_EQ(simplified(floormod(x * Expr(8) - Expr(1), Expr(8))), "7");
}

TEST_F(SimplifyTest, DivModUsesBoundsAcrossAQuotientBoundary) {
  VarBounds b{{x.node(), Interval{0, 6}}};
  EXPECT_EQ(simplified(floordiv(x + Expr(9), Expr(8)), b), "1");
  EXPECT_EQ(simplified(floormod(x + Expr(9), Expr(8)), b), "(x + 1)");
  // x + 9 reaches 16 when x can be 7: the quotient is not decided, only its constant part.
  EXPECT_EQ(simplified(floordiv(x + Expr(9), Expr(8)), {{x.node(), Interval{0, 7}}}), "(floordiv((x + 1), 8) + 1)");
}

TEST_F(SimplifyTest, NestedFloorDivisionsCombine) {
  EXPECT_EQ(simplified(floordiv(floordiv(x, Expr(4)), Expr(2))), "floordiv(x, 8)");
}

TEST_F(SimplifyTest, DivisionAndModuloByOne) {
  EXPECT_EQ(simplified(floordiv(x, Expr(1))), "x");
  EXPECT_TRUE(isConstInt(simplify(floormod(x, Expr(1))), 0));
}

TEST_F(SimplifyTest, TruncatingDivisionOnlyWhenTheDividendIsNonNegative) {
  VarBounds b{{x.node(), Interval{0, 10}}, {y.node(), Interval{0, 3}}};
  EXPECT_EQ(simplified(truncdiv(x * Expr(4) + y, Expr(4)), b), "x");
  EXPECT_EQ(simplified(truncmod(x * Expr(4) + y, Expr(4)), b), "y");
  // x may be negative: truncdiv(-1, 4) = 0 but the floor rule would give -1.
  Expr unresolved = simplify(truncdiv(x * Expr(4) + y, Expr(4)), {{y.node(), Interval{0, 3}}});
  EXPECT_EQ(unresolved.kind(), ExprKind::Div);
}

TEST_F(SimplifyTest, DivisionByANonConstantStays) {
  EXPECT_EQ(simplified(floordiv(x, y)), "floordiv(x, y)");
}

// ---- min, max and comparisons ---------------------------------------------------------------

TEST_F(SimplifyTest, MinMaxDecidedByTheDifference) {
  EXPECT_EQ(simplified(min(x, x + Expr(1))), "x");
  EXPECT_EQ(simplified(max(x, x + Expr(1))), "(x + 1)");
  EXPECT_EQ(simplified(min(x * Expr(2) + Expr(3), x * Expr(2))), "(x*2)");
}

TEST_F(SimplifyTest, MinMaxDecidedByBounds) {
  VarBounds b{{x.node(), Interval{0, 5}}};
  EXPECT_EQ(simplified(max(x, Expr(10)), b), "10");
  EXPECT_EQ(simplified(min(x, Expr(10)), b), "x");
  EXPECT_EQ(simplified(max(x, Expr(0)), b), "x");
  EXPECT_EQ(simplified(min(x, Expr(10))), "min(x, 10)");
  EXPECT_EQ(simplified(min(x, Expr(3)), b), "min(x, 3)");
}

TEST_F(SimplifyTest, ComparisonsDecidedByBounds) {
  VarBounds b{{x.node(), Interval{0, 7}}};
  EXPECT_TRUE(isConstInt(simplify(x < Expr(8), b), 1));
  EXPECT_TRUE(isConstInt(simplify(x >= Expr(0), b), 1));
  EXPECT_TRUE(isConstInt(simplify(x > Expr(7), b), 0));
  EXPECT_TRUE(isConstInt(simplify(x == Expr(8), b), 0));
  EXPECT_TRUE(isConstInt(simplify(x != Expr(8), b), 1));
  EXPECT_TRUE(isConstInt(simplify(x <= Expr(7), b), 1));
  EXPECT_EQ(simplified(x < Expr(7), b), "(x < 7)");
  EXPECT_EQ(simplified(x == Expr(3), b), "(x == 3)");
  EXPECT_TRUE(isConstInt(simplify(x + Expr(1) > x), 1));
}

TEST_F(SimplifyTest, ComparisonWithAConstantCollectsTheConstants) {
  EXPECT_EQ(simplified(x + Expr(32) < Expr(37)), "(x < 5)");
  EXPECT_EQ(simplified(x * Expr(4) + y - Expr(2) >= Expr(1)), "(((x*4) + y) >= 3)");
  EXPECT_EQ(simplified(x + Expr(1) == Expr(1)), "(x == 0)");
  EXPECT_EQ(simplified(x + Expr(3) < y), "((x + 3) < y)");  // no constant side: left as written
}

TEST_F(SimplifyTest, ProveTrue) {
  VarBounds b{{x.node(), Interval{0, 7}}, {y.node(), Interval{0, 7}}};
  EXPECT_TRUE(proveTrue(x * Expr(8) + y < Expr(64), b));
  EXPECT_FALSE(proveTrue(x * Expr(8) + y < Expr(63), b));
  EXPECT_FALSE(proveTrue(x < Expr(64)));  // unbounded x
  EXPECT_TRUE(proveTrue((x >= Expr(0)) && (y < Expr(8)), b));
}

TEST_F(SimplifyTest, SelectWithADecidedCondition) {
  VarBounds b{{x.node(), Interval{0, 3}}};
  EXPECT_EQ(simplified(select(x < Expr(4), y, z), b), "y");
  EXPECT_EQ(simplified(ifThenElse(x > Expr(3), y, z + Expr(0)), b), "z");
  EXPECT_EQ(simplified(select(x < Expr(2), y, z), b), "select((x < 2), y, z)");
}

// ---- ramps and broadcasts ------------------------------------------------------------------

TEST_F(SimplifyTest, RampPlusBroadcastIsARamp) {
  EXPECT_EQ(simplified(ramp(x, Expr(1), 8) + broadcast(y, 8)), "ramp((x + y), 1, 8)");
  EXPECT_EQ(simplified(broadcast(y, 4) + ramp(x, Expr(2), 4)), "ramp((y + x), 2, 4)");
  EXPECT_EQ(simplified(ramp(x, Expr(1), 8) - broadcast(x, 8)), "ramp(0, 1, 8)");
}

TEST_F(SimplifyTest, RampTimesBroadcastScalesBaseAndStride) {
  EXPECT_EQ(simplified(ramp(x, Expr(1), 4) * Expr(3)), "ramp((x*3), 3, 4)");
  EXPECT_EQ(simplified(broadcast(Expr(2), 4) * ramp(x + Expr(1), Expr(1), 4)), "ramp(((x*2) + 2), 2, 4)");
}

TEST_F(SimplifyTest, RampPlusRampAddsStrides) {
  EXPECT_EQ(simplified(ramp(x, Expr(1), 4) + ramp(y, Expr(2), 4)), "ramp((x + y), 3, 4)");
}

TEST_F(SimplifyTest, BroadcastArithmeticStaysScalarInside) {
  EXPECT_EQ(simplified(broadcast(x, 4) + broadcast(Expr(2), 4)), "broadcast((x + 2), 4)");
  EXPECT_EQ(simplified(broadcast(Expr(2), 4) * broadcast(Expr(3), 4)), "broadcast(6, 4)");
  Expr fv = simplify(broadcast(f, 8) * broadcast(Expr(1.0f), 8));
  EXPECT_EQ(toString(fv), "broadcast(f, 8)");
}

TEST_F(SimplifyTest, RampWithZeroStrideIsABroadcast) {
  Expr e = simplify(ramp(x + Expr(0), Expr(0), 4));
  ASSERT_NE(e.as<BroadcastNode>(), nullptr) << toString(e);
  EXPECT_EQ(toString(e), "broadcast(x, 4)");
}

TEST_F(SimplifyTest, VectorLoadIndexBecomesADenseRamp) {
  Buffer a = makeBuffer("A", DataType::float32(), {64}, BufferNode::Scope::Global);
  Expr e = simplify(load(a, ramp(x * Expr(8), Expr(1), 8) + broadcast(Expr(4), 8)));
  ASSERT_NE(e.as<LoadNode>(), nullptr);
  EXPECT_EQ(e.type(), DataType::float32(8));
  EXPECT_EQ(toString(e), "A[ramp(((x*8) + 4), 1, 8)]");
}

TEST_F(SimplifyTest, ADenseRampFromAMultipleOfItsLanesDividesIntoOneRowAndAColumnRamp) {
  // A fused copy index 4x + lane taken apart into rows of 64: all four lanes in one row.
  Expr fused = ramp(x * Expr(4), Expr(1), 4);
  EXPECT_EQ(simplified(floordiv(fused, broadcast(Expr(64), 4))), "broadcast(floordiv((x*4), 64), 4)");
  EXPECT_EQ(simplified(floormod(fused, broadcast(Expr(64), 4))), "ramp(floormod((x*4), 64), 1, 4)");
  // Starting at 4x + 2, or rows of 66: the lanes may straddle two rows; left as vectors.
  EXPECT_EQ(simplified(floordiv(ramp(x * Expr(4) + Expr(2), Expr(1), 4), broadcast(Expr(64), 4))).find("broadcast(floordiv"),
            std::string::npos);
  EXPECT_EQ(simplify(floormod(fused, broadcast(Expr(66), 4))).as<RampNode>(), nullptr);
}

TEST_F(SimplifyTest, KnownDivisorsOfIndexExpressions) {
  EXPECT_EQ(knownDivisor(x * Expr(8) + Expr(12)), 4);
  EXPECT_EQ(knownDivisor(x * Expr(8) + y * Expr(6)), 2);
  EXPECT_EQ(knownDivisor(x + Expr(4)), 1);
  EXPECT_EQ(knownDivisor(Expr(int64_t(0))), 0);
  // A remainder by 64 of a multiple of 4 is a multiple of 4; a quotient is anything.
  EXPECT_EQ(knownDivisor(floormod(x * Expr(4), Expr(64)) + y * Expr(768)), 4);
  EXPECT_EQ(knownDivisor(floordiv(x * Expr(4), Expr(64)) * Expr(2)), 2);
}

// ---- statements: guards and loops ---------------------------------------------------------

class SimplifyStmtTest : public SimplifyTest {
 protected:
  Buffer out = makeBuffer("B", DataType::float32(), {64}, BufferNode::Scope::Global);
  Var i{"i"}, o{"o"};
  Stmt storeAt(const Expr& index) { return makeStore(out, index, Expr(1.0f)); }
};

TEST_F(SimplifyStmtTest, GuardProvenByTheLoopRangeDisappears) {
  Stmt s = makeFor(i, Expr(0), Expr(8), ForKind::Serial, makeIf(i < Expr(8), storeAt(i)));
  Stmt r = simplify(s);
  EXPECT_EQ(count(r).ifs, 0) << toString(r);
  EXPECT_EQ(count(r).stores, 1);
}

TEST_F(SimplifyStmtTest, GuardOnNestedLoopsDisappearsWhenItAlwaysHolds) {
  Stmt inner = makeIf(o * Expr(8) + i < Expr(32), storeAt(o * Expr(8) + i));
  Stmt s = makeFor(o, Expr(0), Expr(4), ForKind::Serial, makeFor(i, Expr(0), Expr(8), ForKind::Serial, inner));
  EXPECT_EQ(count(simplify(s)).ifs, 0);
  // One more outer iteration and the guard is needed.
  Stmt s5 = makeFor(o, Expr(0), Expr(5), ForKind::Serial, makeFor(i, Expr(0), Expr(8), ForKind::Serial, inner));
  EXPECT_EQ(count(simplify(s5)).ifs, 1);
}

TEST_F(SimplifyStmtTest, GuardThatMayFailStays) {
  Stmt s = makeFor(i, Expr(0), Expr(8), ForKind::Serial, makeIf(i < Expr(4), storeAt(i)));
  EXPECT_EQ(toString(simplify(s)), "for i in range(8):\n  if (i < 4):\n    B[i] = 1f\n");
}

TEST_F(SimplifyStmtTest, GuardThatNeverHoldsRemovesTheLoop) {
  Stmt s = makeFor(i, Expr(0), Expr(8), ForKind::Serial, makeIf(i > Expr(10), storeAt(i)));
  Stmt r = simplify(s);
  EXPECT_EQ(count(r).loops, 0) << toString(r);
  EXPECT_EQ(count(r).stores, 0);
}

TEST_F(SimplifyStmtTest, ConditionFalseTakesTheElseBranch) {
  Stmt s = makeFor(i, Expr(0), Expr(8), ForKind::Serial, makeIf(i >= Expr(8), storeAt(Expr(0)), storeAt(i)));
  EXPECT_EQ(toString(simplify(s)), "for i in range(8):\n  B[i] = 1f\n");
}

TEST_F(SimplifyStmtTest, LoopOfOneIterationBecomesItsBody) {
  Stmt s = makeFor(o, Expr(3), Expr(1), ForKind::Serial, storeAt(o * Expr(2) + Expr(1)));
  EXPECT_EQ(toString(simplify(s)), "B[7] = 1f\n");
}

TEST_F(SimplifyStmtTest, ParallelLoopOfOneIterationIsKept) {
  Stmt s = makeFor(o, Expr(0), Expr(1), ForKind::Parallel, storeAt(o));
  EXPECT_EQ(count(simplify(s)).loops, 1);
}

TEST_F(SimplifyStmtTest, LoopWithANonZeroMinBoundsItsVariable) {
  // i in [4, 8): i >= 4 always holds, i < 6 does not.
  Stmt s = makeFor(i, Expr(4), Expr(4), ForKind::Serial, makeIf((i >= Expr(4)) && (i < Expr(6)), storeAt(i)));
  EXPECT_EQ(toString(simplify(s)), "for i in range(4, 8):\n  if (i < 6):\n    B[i] = 1f\n");
}

TEST_F(SimplifyStmtTest, SimplifyingTwiceChangesNothing) {
  Stmt s = makeFor(o, Expr(0), Expr(5), ForKind::Serial,
                   makeFor(i, Expr(0), Expr(8), ForKind::Serial,
                           makeIf(o * Expr(8) + i < Expr(37), storeAt(floordiv(o * Expr(8) + i, Expr(2)) + Expr(1) - Expr(1)))));
  Stmt once = simplify(s);
  EXPECT_EQ(toString(simplify(once)), toString(once));
  EXPECT_EQ(toString(once), "for o in range(5):\n  for i in range(8):\n    if (((o*8) + i) < 37):\n"
                            "      B[((o*4) + floordiv(i, 2))] = 1f\n");
}

}  // namespace
