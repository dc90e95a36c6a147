// The reference evaluator on tiny examples whose results are worked out by hand: it is the
// oracle every generated kernel is compared with, so its semantics (reduction identities,
// integer wrap-around, rounding of stored values, division rules, intrinsics) are pinned here.
#include <gtest/gtest.h>

#include <cmath>

#include "common/ErrorText.h"
#include "te/ReferenceEvaluator.h"

using namespace tessel;
using namespace tessel::te;
using namespace tessel::testsupport;
using ir::Intrinsic;

namespace {

/// Evaluates a one-input, one-output DAG.
std::vector<double> run(const Tensor& in, const Tensor& out, std::vector<double> values) {
  ComputeDAG dag({out}, {in});
  auto result = evaluateReference(dag, {{dag.inputNames()[0], std::move(values)}});
  return result.at(dag.outputNames()[0]);
}

using Values = std::vector<double>;

TEST(ReferenceEvaluator, MatmulByHand) {
  auto A = placeholder({2, 3}, DataType::float32(), "A");
  auto B = placeholder({3, 2}, DataType::float32(), "B");
  auto k = reduceAxis(3, "k");
  auto C = compute({2, 2}, [&](const std::vector<Var>& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); }, "C");
  ComputeDAG dag({C}, {A, B});
  // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
  auto r = evaluateReference(dag, {{"A", {1, 2, 3, 4, 5, 6}}, {"B", {7, 8, 9, 10, 11, 12}}});
  EXPECT_EQ(r.at("C"), (Values{58, 64, 139, 154}));
  EXPECT_EQ(r.at("A"), (Values{1, 2, 3, 4, 5, 6}));  // inputs are part of the result
}

TEST(ReferenceEvaluator, MaxAndMinStartFromTheirIdentities) {
  auto A = placeholder({2, 3}, DataType::float32(), "A");
  auto k = reduceAxis(3, "k");
  auto M = compute({2}, [&](const std::vector<Var>& i) { return te::max(A(i[0], k.var), {k}); }, "M");
  auto N = compute({2}, [&](const std::vector<Var>& i) { return te::min(A(i[0], k.var), {k}); }, "N");
  // All negative: a max starting from 0 would give 0. All positive: likewise for min.
  EXPECT_EQ(run(A, M, {-5, -2, -9, -1, -7, -3}), (Values{-2, -1}));
  EXPECT_EQ(run(A, N, {5, 2, 9, 1, 7, 3}), (Values{2, 1}));
}

TEST(ReferenceEvaluator, IntegerMaxOfTheLowestValues) {
  auto A = placeholder({3}, DataType::int8(), "A");
  auto k = reduceAxis(3, "k");
  auto M = compute({1}, [&](const std::vector<Var>&) { return te::max(A(k.var), {k}); }, "M");
  EXPECT_EQ(run(A, M, {-128, -128, -127}), (Values{-127}));
}

TEST(ReferenceEvaluator, ReductionWithACondition) {
  // Prefix sums: S[i] = sum of A[k] for k <= i.
  auto A = placeholder({4}, DataType::float32(), "A");
  auto k = reduceAxis(4, "k");
  auto S = compute({4}, [&](const std::vector<Var>& i) { return sum(A(k.var), {k}, k.var <= i[0]); }, "S");
  EXPECT_EQ(run(A, S, {1, 2, 3, 4}), (Values{1, 3, 6, 10}));
}

TEST(ReferenceEvaluator, PaddingThroughIfThenElse) {
  // A 1-D convolution with one element of zero padding on both sides.
  auto A = placeholder({4}, DataType::float32(), "A");
  auto P = compute({6}, [&](const std::vector<Var>& i) {
    return ir::ifThenElse(i[0] >= Expr(1) && i[0] < Expr(5), A(i[0] - Expr(1)), Expr(0.0f));
  }, "P");
  auto r = reduceAxis(3, "r");
  auto C = compute({4}, [&](const std::vector<Var>& i) { return sum(P(i[0] + r.var), {r}); }, "C");
  EXPECT_EQ(run(A, C, {1, 2, 3, 4}), (Values{3, 6, 9, 7}));
}

TEST(ReferenceEvaluator, IntegerArithmeticWrapsAround) {
  auto A = placeholder({2}, DataType::int8(), "A");
  auto k = reduceAxis(2, "k");
  auto S = compute({1}, [&](const std::vector<Var>&) { return sum(A(k.var), {k}); }, "S");
  EXPECT_EQ(run(A, S, {100, 100}), (Values{-56}));
  auto U = placeholder({2}, DataType::uint8(), "U");
  auto T = compute({1}, [&](const std::vector<Var>&) { return U(Expr(0)) + U(Expr(1)); }, "T");
  EXPECT_EQ(run(U, T, {250, 10}), (Values{4}));
  auto I = placeholder({1}, DataType::int32(), "I");
  auto J = compute({1}, [&](const std::vector<Var>& i) { return I(i[0]) * ir::intImm(DataType::int32(), 2); }, "J");
  EXPECT_EQ(run(I, J, {2147483647}), (Values{-2}));
}

TEST(ReferenceEvaluator, DivisionAndModuloRules) {
  auto A = placeholder({4}, DataType::int32(), "A");
  auto two = ir::intImm(DataType::int32(), 2);
  Values input{-7, 7, -1, 6};
  auto fdiv = compute({4}, [&](const std::vector<Var>& i) { return ir::floordiv(A(i[0]), two); }, "fdiv");
  auto fmod = compute({4}, [&](const std::vector<Var>& i) { return ir::floormod(A(i[0]), two); }, "fmod");
  auto tdiv = compute({4}, [&](const std::vector<Var>& i) { return ir::truncdiv(A(i[0]), two); }, "tdiv");
  auto tmod = compute({4}, [&](const std::vector<Var>& i) { return ir::truncmod(A(i[0]), two); }, "tmod");
  EXPECT_EQ(run(A, fdiv, input), (Values{-4, 3, -1, 3}));
  EXPECT_EQ(run(A, fmod, input), (Values{1, 1, 1, 0}));
  EXPECT_EQ(run(A, tdiv, input), (Values{-3, 3, 0, 3}));
  EXPECT_EQ(run(A, tmod, input), (Values{-1, 1, -1, 0}));
}

TEST(ReferenceEvaluator, AffineAndTreeIndicesReadTheSameElements) {
  // Indices affine in the variables and in floor quotients and remainders by constants (here
  // with negative coefficients, a reduction variable and a packed-layout style split) are
  // computed as integer dot products; the same indices behind min / max are walked as trees.
  auto A = placeholder({4, 6}, DataType::float32(), "A");
  auto k = reduceAxis(3, "k");
  auto row = [](const Var& i) { return Expr(3) - i * Expr(2); };
  auto column = [&](const Var& i) { return i * Expr(2) + k.var; };
  auto affine = compute({2, 2}, [&](const std::vector<Var>& i) { return sum(A(row(i[0]), column(i[1])), {k}); }, "affine");
  auto split = compute({2, 2}, [&](const std::vector<Var>& i) {
    Expr c = column(i[1]) + Expr(6) * (i[0] - Expr(1));  // as a flat index of a [?, 6] view, then split back
    return sum(A(ir::floordiv(c, Expr(6)) + Expr(4) - Expr(3) * i[0], ir::floormod(c, Expr(6))), {k});
  }, "split");
  auto tree = compute({2, 2}, [&](const std::vector<Var>& i) {
    return sum(A(ir::max(row(i[0]), Expr(0)), ir::min(column(i[1]), Expr(5))), {k});
  }, "tree");
  Values input(24);
  for (size_t j = 0; j < input.size(); ++j) input[j] = double(j);  // A[r][c] = 6r + c
  // out[i0][i1] = sum over k of 6 (3 - 2 i0) + 2 i1 + k
  EXPECT_EQ(run(A, affine, input), (Values{57, 63, 21, 27}));
  EXPECT_EQ(run(A, split, input), (Values{57, 63, 21, 27}));
  EXPECT_EQ(run(A, tree, input), (Values{57, 63, 21, 27}));
  auto below = compute({2}, [&](const std::vector<Var>& i) { return A(Expr(1) - i[0] * Expr(2), i[0]); }, "below");
  expectContains(errorOf([&] { run(A, below, input); }), "read of A out of bounds at dimension 0 (index -1)");
  auto past = compute({2}, [&](const std::vector<Var>& i) { return A(ir::floordiv(i[0] + Expr(7), Expr(2)), i[0]); }, "past");
  expectContains(errorOf([&] { run(A, past, input); }), "read of A out of bounds at dimension 0 (index 4)");
}

TEST(ReferenceEvaluator, SumsOfProductsOfTwoTensorsByHand) {
  // A float sum of products of two reads (a convolution's form: the weight varies along the
  // output's innermost axis, the input does not) is run over flat indices when its reads stay
  // in bounds for every value of the variables; a read that may leave them is still reported.
  auto A = placeholder({5}, DataType::float32(), "A");
  auto W = placeholder({2, 3}, DataType::float32(), "W");
  auto k = reduceAxis(2, "k");
  auto conv = [&](int64_t outputs) {
    return compute({outputs, 3}, [&](const std::vector<Var>& i) { return sum(A(i[0] + k.var) * W(k.var, i[1]), {k}); }, "conv");
  };
  auto evaluate = [&](const Tensor& out) {
    ComputeDAG dag({out}, {A, W});
    return evaluateReference(dag, {{"A", {1, 2, 3, 4, 5}}, {"W", {1, 2, 3, 4, 5, 6}}}).at("conv");
  };
  // conv[i][o] = A[i] W[0][o] + A[i + 1] W[1][o]
  EXPECT_EQ(evaluate(conv(4)), (Values{9, 12, 15, 14, 19, 24, 19, 26, 33, 24, 33, 42}));
  expectContains(errorOf([&] { evaluate(conv(5)); }), "read of A out of bounds at dimension 0 (index 5)");
}

TEST(ReferenceEvaluator, CastsTruncateAndRound) {
  auto A = placeholder({4}, DataType::float32(), "A");
  auto toInt8 = compute({4}, [&](const std::vector<Var>& i) { return ir::cast(DataType::int8(), A(i[0])); }, "c");
  EXPECT_EQ(run(A, toInt8, {2.7, -2.7, 127.9, 0.5}), (Values{2, -2, 127, 0}));
  auto toHalf = compute({4}, [&](const std::vector<Var>& i) { return ir::cast(DataType::float16(), A(i[0])); }, "h");
  // float16 has 10 mantissa bits: 1/3 -> 0.333251953125, 1 + 2^-11 ties to even -> 1.
  auto h = run(A, toHalf, {1.0 / 3.0, 1.0 + std::ldexp(1.0, -11), 70000, 1e-8});
  EXPECT_EQ(h[0], 0.333251953125);
  EXPECT_EQ(h[1], 1.0);
  EXPECT_EQ(h[2], INFINITY);
  EXPECT_EQ(h[3], 0.0);
  auto toBool = compute({4}, [&](const std::vector<Var>& i) { return ir::cast(DataType::boolean(), A(i[0])); }, "b");
  EXPECT_EQ(run(A, toBool, {0, 2, -0.5, 0}), (Values{0, 1, 1, 0}));
}

TEST(ReferenceEvaluator, StoredFloat32ValuesAreRounded) {
  auto A = placeholder({1}, DataType::float32(), "A");
  auto B = compute({1}, [&](const std::vector<Var>& i) { return A(i[0]) / Expr(3.0f); }, "B");
  EXPECT_EQ(run(A, B, {1})[0], double(1.0f / 3.0f));
}

TEST(ReferenceEvaluator, BoolTensorsAndSelect) {
  auto A = placeholder({4}, DataType::float32(), "A");
  auto M = compute({4}, [&](const std::vector<Var>& i) { return A(i[0]) > Expr(0.5f); }, "M");
  auto S = compute({4}, [&](const std::vector<Var>& i) { return ir::select(M(i[0]), A(i[0]), Expr(0.0f) - A(i[0])); }, "S");
  ComputeDAG dag({S}, {A});
  auto r = evaluateReference(dag, {{"A", {0.25, 0.75, 1.0, -3.0}}});
  EXPECT_EQ(r.at("M"), (Values{0, 1, 1, 0}));
  EXPECT_EQ(r.at("S"), (Values{-0.25, 0.75, 1.0, 3.0}));
}

TEST(ReferenceEvaluator, Intrinsics) {
  auto A = placeholder({1}, DataType::float32(), "A");
  auto apply = [&](Intrinsic op, double x, std::vector<Expr> extra = {}) {
    auto B = compute({1}, [&](const std::vector<Var>& i) {
      std::vector<Expr> args{A(i[0])};
      args.insert(args.end(), extra.begin(), extra.end());
      return ir::call(op, args);
    }, "B");
    return run(A, B, {x})[0];
  };
  auto f32 = [](double v) { return double(float(v)); };
  EXPECT_EQ(apply(Intrinsic::Exp, 1.0), f32(std::exp(1.0)));
  EXPECT_EQ(apply(Intrinsic::Log, 8.0), f32(std::log(8.0)));
  EXPECT_EQ(apply(Intrinsic::Sqrt, 2.25), 1.5);
  EXPECT_EQ(apply(Intrinsic::Rsqrt, 4.0), 0.5);
  EXPECT_EQ(apply(Intrinsic::Tanh, 0.5), f32(std::tanh(0.5)));
  EXPECT_EQ(apply(Intrinsic::Sigmoid, 0.0), 0.5);
  EXPECT_EQ(apply(Intrinsic::Sigmoid, 2.0), f32(1 / (1 + std::exp(-2.0))));
  EXPECT_EQ(apply(Intrinsic::Erf, 0.5), f32(std::erf(0.5)));
  EXPECT_EQ(apply(Intrinsic::Pow, 2.0, {Expr(10.0f)}), 1024.0);
  EXPECT_EQ(apply(Intrinsic::Abs, -3.5), 3.5);
  EXPECT_EQ(apply(Intrinsic::Floor, -2.5), -3.0);
  EXPECT_EQ(apply(Intrinsic::Ceil, -2.5), -2.0);
  EXPECT_EQ(apply(Intrinsic::Round, 2.5), 3.0);  // half away from zero, as C's round()
  EXPECT_EQ(apply(Intrinsic::Round, -2.5), -3.0);
}

TEST(ReferenceEvaluator, IntegerAbsAndPowExponentCast) {
  auto A = placeholder({2}, DataType::int32(), "A");
  auto B = compute({2}, [&](const std::vector<Var>& i) { return ir::call(Intrinsic::Abs, {A(i[0])}); }, "B");
  EXPECT_EQ(B.dtype(), DataType::int32());
  EXPECT_EQ(run(A, B, {-7, 3}), (Values{7, 3}));
  // pow's exponent takes the base's type.
  Expr p = ir::call(Intrinsic::Pow, {Expr(2.0f), Expr(3)});
  EXPECT_EQ(p.as<ir::CallNode>()->args[1].type(), DataType::float32());
}

TEST(ReferenceEvaluator, IntrinsicsCheckTheirArguments) {
  Var n("n");
  expectContains(errorOf([&] { ir::call(Intrinsic::Exp, {n}); }), "exp needs a float argument, got int64");
  expectContains(errorOf([&] { ir::call(Intrinsic::Sqrt, {}); }), "sqrt needs an argument");
  expectContains(errorOf([&] { ir::call(Intrinsic::Pow, {Expr(1.0f)}); }), "pow needs two arguments");
}

TEST(ReferenceEvaluator, MissingOrWrongSizedInputsAreErrors) {
  auto A = placeholder({4}, DataType::float32(), "A");
  auto B = compute({4}, [&](const std::vector<Var>& i) { return A(i[0]); }, "B");
  ComputeDAG dag({B});
  expectContains(errorOf([&] { evaluateReference(dag, {}); }), "no value given for input 'A'");
  expectContains(errorOf([&] { evaluateReference(dag, {{"A", {1, 2}}}); }), "'A' has 2 elements, expected 4");
}

TEST(ReferenceEvaluator, OutOfBoundsReadsAreErrors) {
  auto A = placeholder({4}, DataType::float32(), "A");
  auto B = compute({4}, [&](const std::vector<Var>& i) { return A(i[0] + Expr(1)); }, "B");
  expectContains(errorOf([&] { run(A, B, {1, 2, 3, 4}); }), "read of A out of bounds");
}

TEST(ReferenceEvaluator, RoundToType) {
  EXPECT_EQ(roundToType(300, DataType::uint8()), 44);
  EXPECT_EQ(roundToType(-129, DataType::int8()), 127);
  EXPECT_EQ(roundToType(0.1, DataType::float32()), double(0.1f));
  EXPECT_EQ(roundToType(0.1, DataType::float64()), 0.1);
  EXPECT_EQ(roundToType(65504, DataType::float16()), 65504);
  EXPECT_EQ(roundToType(65520, DataType::float16()), INFINITY);  // halfway to 2^16 rounds up
  EXPECT_EQ(roundToType(std::ldexp(1.0, -24), DataType::float16()), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(roundToType(-0.0, DataType::boolean()), 0);
  EXPECT_EQ(roundToType(5, DataType::boolean()), 1);
}

TEST(DataTypes, TheTensorElementTypesRoundTripThroughText) {
  for (DataType t : {DataType::float32(), DataType::float16(), DataType::int8(), DataType::uint8(), DataType::int32(),
                     DataType::int64(), DataType::boolean()}) {
    EXPECT_EQ(DataType::parse(t.str()), t) << t.str();
    EXPECT_EQ(placeholder({2}, t, "T").dtype(), t);
  }
  EXPECT_EQ(DataType::float16().storageBytes(), 2);
  EXPECT_EQ(DataType::boolean().storageBytes(), 1);
  EXPECT_EQ(DataType::int64().storageBytes(), 8);
}

}  // namespace
