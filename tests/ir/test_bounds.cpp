// Constant interval bounds: tight where the arithmetic allows, saturating instead of
// overflowing, and never narrower than the values an expression can take.
#include <gtest/gtest.h>

#include "ir/Bounds.h"
#include "ir/Printer.h"

using namespace tessel;
using namespace tessel::ir;

namespace {

class BoundsTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"};
  VarBounds small{{x.node(), Interval{0, 3}}, {y.node(), Interval{0, 3}}};

  void expectBounds(const Expr& e, const VarBounds& b, int64_t lo, int64_t hi) {
    Interval r = constBounds(e, b);
    EXPECT_EQ(r.min, lo) << toString(e);
    EXPECT_EQ(r.max, hi) << toString(e);
  }
};

TEST_F(BoundsTest, LinearArithmetic) {
  expectBounds(x * Expr(4) + y, small, 0, 15);
  expectBounds(x - y, small, -3, 3);
  expectBounds(x * Expr(-2) + Expr(1), small, -5, 1);
  expectBounds(x * y, small, 0, 9);
}

TEST_F(BoundsTest, ConstantsAndUnknownVariables) {
  expectBounds(Expr(7), {}, 7, 7);
  Interval unknown = constBounds(x, {});
  EXPECT_FALSE(unknown.boundedBelow());
  EXPECT_FALSE(unknown.boundedAbove());
  // Narrow integer variables are bounded by their type.
  expectBounds(Var("c", DataType::int8()), {}, -128, 127);
  expectBounds(Var("u", DataType::uint8()), {}, 0, 255);
  expectBounds(Var("b", DataType::boolean()), {}, 0, 1);
}

TEST_F(BoundsTest, FloorDivisionAndModulo) {
  VarBounds b{{x.node(), Interval{0, 15}}};
  expectBounds(floordiv(x, Expr(4)), b, 0, 3);
  expectBounds(floordiv(x, Expr(-4)), b, -4, 0);
  expectBounds(floormod(x, Expr(4)), b, 0, 3);
  // Within one period the modulo keeps the exact range.
  expectBounds(floormod(x, Expr(4)), {{x.node(), Interval{8, 10}}}, 0, 2);
  expectBounds(floordiv(x - Expr(5), Expr(4)), b, -2, 2);
}

TEST_F(BoundsTest, DivisionByAnUnknownOrZeroIsUnbounded) {
  VarBounds b{{x.node(), Interval{0, 15}}, {y.node(), Interval{1, 2}}};
  EXPECT_FALSE(constBounds(floordiv(x, y), b).bounded());
  EXPECT_FALSE(constBounds(floordiv(x, Expr(0)), b).bounded());
}

TEST_F(BoundsTest, TruncatingDivisionAndModulo) {
  VarBounds positive{{x.node(), Interval{0, 9}}};
  expectBounds(truncdiv(x, Expr(4)), positive, 0, 2);
  expectBounds(truncmod(x, Expr(4)), positive, 0, 3);
  // A negative dividend: truncmod keeps the dividend's sign.
  expectBounds(truncmod(x, Expr(4)), {{x.node(), Interval{-9, 9}}}, -3, 3);
}

TEST_F(BoundsTest, TruncatingDivisionByANegativeConstantIsSound) {
  // truncdiv(5, -2) = -2 (rounds toward zero), not floor(-2.5) = -3.
  VarBounds five{{x.node(), Interval{5, 5}}};
  Interval r = constBounds(truncdiv(x, Expr(-2)), five);
  EXPECT_LE(r.min, -2);
  EXPECT_GE(r.max, -2);
  VarBounds range{{x.node(), Interval{1, 9}}};
  Interval s = constBounds(truncdiv(x, Expr(-4)), range);
  EXPECT_LE(s.min, -2);
  EXPECT_GE(s.max, 0);
}

TEST_F(BoundsTest, MinAndMax) {
  VarBounds b{{x.node(), Interval{0, 10}}, {y.node(), Interval{5, 7}}};
  expectBounds(min(x, y), b, 0, 7);
  expectBounds(max(x, y), b, 5, 10);
}

TEST_F(BoundsTest, ComparisonsGiveZeroOneOrBoth) {
  expectBounds(x < Expr(4), small, 1, 1);
  expectBounds(x > Expr(3), small, 0, 0);
  expectBounds(x < Expr(2), small, 0, 1);
  expectBounds(x == y, small, 0, 1);
  expectBounds(x == Expr(9), small, 0, 0);
  expectBounds(x != Expr(9), small, 1, 1);
  expectBounds((x < Expr(4)) && (y < Expr(2)), small, 0, 1);
  expectBounds((x < Expr(4)) || (y < Expr(2)), small, 1, 1);
  expectBounds(!(x < Expr(4)), small, 0, 0);
}

TEST_F(BoundsTest, SaturatesInsteadOfOverflowing) {
  VarBounds half{{x.node(), Interval{0, Interval::kPosInf}}};
  Interval r = constBounds(x * Expr(2) + Expr(1), half);
  EXPECT_EQ(r.min, 1);
  EXPECT_FALSE(r.boundedAbove());
  Interval n = constBounds(Expr(0) - x, half);
  EXPECT_FALSE(n.boundedBelow());
  EXPECT_EQ(n.max, 0);
  VarBounds big{{x.node(), Interval{0, int64_t(1) << 62}}};
  EXPECT_FALSE(constBounds(x * Expr(8), big).boundedAbove());
}

TEST_F(BoundsTest, RampsBoundEveryLane) {
  VarBounds b{{x.node(), Interval{0, 10}}};
  expectBounds(ramp(x, Expr(2), 4), b, 0, 16);
  expectBounds(ramp(x, Expr(-1), 4), b, -3, 10);
  expectBounds(broadcast(x, 8), b, 0, 10);
}

TEST_F(BoundsTest, CastsKeepTheRangeOnlyWhenItFits) {
  expectBounds(cast(DataType::int8(), x), {{x.node(), Interval{0, 100}}}, 0, 100);
  expectBounds(cast(DataType::int8(), x), {{x.node(), Interval{0, 300}}}, -128, 127);
  expectBounds(cast(DataType::uint8(), x), {{x.node(), Interval{-1, 3}}}, 0, 255);
}

TEST_F(BoundsTest, SelectUsesTheConditionWhenItIsDecided) {
  expectBounds(select(x < Expr(5), Expr(1), Expr(10)), small, 1, 1);
  expectBounds(select(x < Expr(2), Expr(1), Expr(10)), small, 1, 10);
}

TEST_F(BoundsTest, FloatArithmeticIsUnbounded) {
  Var f("f", DataType::float32());
  EXPECT_FALSE(constBounds(f + Expr(1.0f), {}).bounded());
  expectBounds(f < Expr(1.0f), {}, 0, 1);
}

}  // namespace
