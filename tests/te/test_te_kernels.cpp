// Every tensor element type and every math intrinsic of the tensor-expression language, taken
// all the way through lowering, code generation, the C++ compiler and the runtime, and compared
// with the reference evaluator: once with plain loops and once with vectorized loops. Each DAG
// has many outputs so that one compilation covers many cases.
#include <gtest/gtest.h>

#include "common/KernelCheck.h"
#include "schedule/Steps.h"

using namespace tessel;
using namespace tessel::te;
using ir::Intrinsic;

namespace {

/// Splits the one axis of every named 1-D stage by 8 and vectorizes the inner part.
std::vector<schedule::StepPtr> vectorizeAll(const std::vector<std::string>& stages) {
  std::vector<schedule::StepPtr> steps;
  for (auto& s : stages) {
    steps.push_back(std::make_shared<schedule::SplitStep>(s, "i0", std::vector<int64_t>{8}));
    steps.push_back(std::make_shared<schedule::AnnotateStep>(s, "i0.1", schedule::Annotation::Vectorize));
  }
  return steps;
}

ComputeDAG intrinsicsDag(std::vector<std::string>& names) {
  auto X = placeholder({16}, DataType::float32(), "X");
  std::vector<Tensor> outs;
  auto add = [&](const std::string& name, const std::function<Expr(Expr)>& fn) {
    outs.push_back(compute({16}, [&](const std::vector<Var>& i) { return fn(X(i[0])); }, name));
    names.push_back(name);
  };
  auto f = [](float v) { return Expr(v); };
  add("exp", [](Expr x) { return ir::call(Intrinsic::Exp, {x}); });
  add("log", [](Expr x) { return ir::call(Intrinsic::Log, {x}); });
  add("sqrt", [](Expr x) { return ir::call(Intrinsic::Sqrt, {x}); });
  add("rsqrt", [&](Expr x) { return ir::call(Intrinsic::Rsqrt, {x + f(0.25f)}); });
  add("tanh", [&](Expr x) { return ir::call(Intrinsic::Tanh, {x * f(4.0f) - f(2.0f)}); });
  add("sigmoid", [&](Expr x) { return ir::call(Intrinsic::Sigmoid, {x * f(8.0f) - f(4.0f)}); });
  add("erf", [&](Expr x) { return ir::call(Intrinsic::Erf, {x * f(2.0f)}); });
  add("pow", [&](Expr x) { return ir::call(Intrinsic::Pow, {x, f(1.5f)}); });
  add("abs", [&](Expr x) { return ir::call(Intrinsic::Abs, {x - f(0.5f)}); });
  add("floor", [&](Expr x) { return ir::call(Intrinsic::Floor, {x * f(4.0f)}); });
  add("ceil", [&](Expr x) { return ir::call(Intrinsic::Ceil, {x * f(4.0f)}); });
  add("round", [&](Expr x) { return ir::call(Intrinsic::Round, {x * f(4.0f)}); });
  add("select", [&](Expr x) { return ir::select(x > f(0.5f), x, f(0.0f) - x); });
  add("if_then_else", [&](Expr x) { return ir::ifThenElse(x < f(0.25f), f(1.0f), x * f(3.0f)); });
  // Vectorized, these mix per-lane conditions with lane-invariant values.
  add("step", [&](Expr x) { return ir::select(x > f(0.5f), f(1.0f), f(0.0f)); });
  add("mixed", [&](Expr x) { return ir::select(x > f(0.5f), X(Expr(0)), x); });
  add("to_half", [&](Expr x) { return ir::cast(DataType::float32(), ir::cast(DataType::float16(), x)); });
  return ComputeDAG(outs, {X});
}

TEST(TensorExpressionKernels, EveryIntrinsicMatchesTheReference) {
  std::vector<std::string> names;
  auto dag = intrinsicsDag(names);
  auto plain = kernelcheck::checkAgainstReference(schedule::replay(dag, {}), 11);
  EXPECT_LT(plain.maxRelativeError, 1e-5) << plain.source;
  auto vector = kernelcheck::checkAgainstReference(schedule::replay(dag, vectorizeAll(names)), 12);
  EXPECT_LT(vector.maxRelativeError, 1e-5) << vector.source;
}

ComputeDAG dtypesDag(std::vector<std::string>& elementwise) {
  auto I8 = placeholder({32}, DataType::int8(), "I8");
  auto U8 = placeholder({32}, DataType::uint8(), "U8");
  auto I32 = placeholder({32}, DataType::int32(), "I32");
  auto X = placeholder({32}, DataType::float32(), "X");
  auto three = ir::intImm(DataType::int32(), 3);
  std::vector<Tensor> outs;
  auto add = [&](const std::string& name, const IndexFunction& fn) {
    outs.push_back(compute({32}, fn, name));
    elementwise.push_back(name);
  };
  // Narrow integers wrap around: int8 cubes of [-8, 8] and uint8 products overflow.
  add("cube8", [&](const std::vector<Var>& i) { return I8(i[0]) * I8(i[0]) * I8(i[0]); });
  add("mul_u8", [&](const std::vector<Var>& i) { return U8(i[0]) * U8(i[0]) * ir::intImm(DataType::uint8(), 5); });
  // Integer division rules on negative int32 values.
  add("floordiv", [&](const std::vector<Var>& i) { return ir::floordiv(I32(i[0]), three); });
  add("floormod", [&](const std::vector<Var>& i) { return ir::floormod(I32(i[0]), three); });
  add("truncdiv", [&](const std::vector<Var>& i) { return ir::truncdiv(I32(i[0]), three); });
  add("truncmod", [&](const std::vector<Var>& i) { return ir::truncmod(I32(i[0]), three); });
  // int64 arithmetic beyond 32 bits, and float -> int truncation toward zero.
  add("wide", [&](const std::vector<Var>& i) {
    return ir::cast(DataType::int64(), I32(i[0])) * ir::intImm(DataType::int64(), 1000000007);
  });
  // (Scaling by a power of two keeps the float value exact, so the reference's double
  // arithmetic and the kernel's float arithmetic truncate the same value.)
  add("truncate", [&](const std::vector<Var>& i) { return ir::cast(DataType::int32(), Expr(0.0f) - X(i[0]) * Expr(64.0f)); });
  // float16 and bool intermediates: stored in their own formats, read back.
  auto half = compute({32}, [&](const std::vector<Var>& i) { return ir::cast(DataType::float16(), X(i[0]) / Expr(3.0f)); }, "half");
  auto mask = compute({32}, [&](const std::vector<Var>& i) { return X(i[0]) > Expr(0.5f); }, "mask");
  elementwise.push_back("half");
  elementwise.push_back("mask");
  add("from_half", [&](const std::vector<Var>& i) { return ir::cast(DataType::float32(), half(i[0])) * Expr(2.0f); });
  add("from_mask", [&](const std::vector<Var>& i) { return ir::select(mask(i[0]), X(i[0]), Expr(0.0f) - X(i[0])); });
  // A wrapping int8 reduction: 32 terms of up to 8 * 16 in magnitude.
  auto k = reduceAxis(32, "k");
  outs.push_back(compute({1}, [&](const std::vector<Var>&) { return te::sum(I8(k.var) * ir::intImm(DataType::int8(), 16), {k}); }, "sum8"));
  return ComputeDAG(outs, {I8, U8, I32, X});
}

TEST(TensorExpressionKernels, EveryElementTypeMatchesTheReference) {
  std::vector<std::string> names;
  auto dag = dtypesDag(names);
  EXPECT_EQ(dag.op("half")->dtype, DataType::float16());
  EXPECT_EQ(dag.op("mask")->dtype, DataType::boolean());
  EXPECT_EQ(dag.op("wide")->dtype, DataType::int64());
  auto plain = kernelcheck::checkAgainstReference(schedule::replay(dag, {}), 21);
  EXPECT_EQ(plain.maxRelativeError, 0.0) << plain.source;
  auto vector = kernelcheck::checkAgainstReference(schedule::replay(dag, vectorizeAll(names)), 22);
  EXPECT_EQ(vector.maxRelativeError, 0.0) << vector.source;
}

}  // namespace
