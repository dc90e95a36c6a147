// The loop-IR evaluator (tests/common/LoopIrEvaluator.h) against the compiled kernels: lowered
// schedules with every loop step (vectorize, unroll, parallel, cache stages, padding, rfactor,
// register tiles), a softmax, integer arithmetic and float16 rounding give the compiled
// kernel's numbers, and broken IR (an access out of bounds, a read of a local never written, a
// division by zero, a node lowering never leaves) is an Error naming the function, the buffer
// and the index. The scheduled kernels go into one library: one compiler run.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "common/ErrorText.h"
#include "common/KernelCheck.h"
#include "common/LoopIrEvaluator.h"
#include "ops/Examples.h"
#include "ops/Schedules.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "schedule/ExampleSchedules.h"
#include "support/Error.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::ir;
using namespace tessel::schedule::examples;
using schedule::StepPtr;

namespace {

struct Case {
  std::string name;
  te::ComputeDAG dag;
  std::vector<StepPtr> steps;
  /// Winograd's transforms sum many terms in another order than the reference: float32 ulps
  /// of magnitudes up to 100 times an input.
  double tolerance = 1e-5;
};

std::vector<Case> scheduledCases() {
  using namespace tessel::schedule;
  auto withDefault = [](std::string name, te::ComputeDAG dag, double tolerance = 1e-5) {
    auto steps = ops::defaultCpuSchedule(dag);
    return Case{std::move(name), std::move(dag), std::move(steps), tolerance};
  };
  return {
      {"dense: cache write and read, split, fuse, parallel, vectorize, unroll", denseRelu(), tiledSteps()},
      {"conv NCHW: padding inlined, rfactor, vectorize, unroll", ops::conv2dBiasReluNCHW(1, 4, 9, 9, 6, 3, 3, 2, 1), reductionSteps()},
      {"matmul: a split that overruns, rfactor", ops::matmul(3, 5, 12),
       {step<SplitStep>("C", "k", Factors{}, 5), step<RfactorStep>("C", "k.1")}},
      {"matmul int8: vectorized integer multiply-adds", ops::matmul(6, 16, 7, DataType::int8()),
       {step<SplitStep>("C", "j", Factors{8}), step<AnnotateStep>("C", "j.1", Annotation::Vectorize)}},
      withDefault("softmax default: exp, max and sum reductions", ops::softmax(7, 37)),
      withDefault("conv NHWC default: parallel, vector register tile", ops::conv2dNHWC(1, 16, 9, 9, 32, 3, 3, 1, 1)),
      withDefault("conv NCHW default: padded copy, tiles", ops::conv2dBiasReluNCHW(1, 8, 10, 10, 16, 3, 3, 1, 1)),
      withDefault("winograd default: transforms and batched GEMM", ops::conv2dWinogradNHWC(1, 8, 8, 8, 16, 1, 2), 1e-4),
      withDefault("max pooling default: strided windows, -inf padding", ops::maxPool2dNCHW(1, 3, 11, 11, 3, 2, 1)),
      withDefault("depthwise default", ops::depthwiseConv2dNCHW(1, 8, 12, 12, 3, 2, 1)),
  };
}

TEST(LoopIrEvaluator, ScheduledKernelsComputeWhatTheirCompiledCodeComputes) {
  auto cases = scheduledCases();
  std::vector<passes::LoweredFunction> functions;
  for (size_t i = 0; i < cases.size(); ++i)
    functions.push_back(passes::lower(schedule::replay(cases[i].dag, cases[i].steps), fmt::format("case{}", i)));
  kernelcheck::compileInBatches(functions, functions.size(), [&](size_t i, const runtime::Kernel& kernel) {
    auto data = kernelcheck::makeReferenceData(cases[i].dag, 40 + i);
    double compiled = kernelcheck::runAndCompare(kernel, data);
    EXPECT_TRUE(kernelcheck::withinTolerance(compiled, data, cases[i].tolerance)) << cases[i].name << ": compiled error " << compiled;
    try {
      double evaluated = kernelcheck::evaluateAndCompare(functions[i], data);
      EXPECT_TRUE(kernelcheck::withinTolerance(evaluated, data, cases[i].tolerance)) << cases[i].name << ": evaluated error " << evaluated;
    } catch (const Error& e) {
      ADD_FAILURE() << cases[i].name << ": " << e.what();
    }
  });
}

// ---- hand-written IR ----------------------------------------------------------------------------

Buffer argument(const std::string& name, DataType dtype, int64_t size) {
  return makeBuffer(name, dtype, {size}, BufferNode::Scope::Global);
}

passes::LoweredFunction function(std::string name, std::vector<Buffer> args, Stmt body) {
  return {std::move(name), std::move(args), 1, std::move(body)};
}

template <class T>
runtime::Tensor tensorOf(const std::vector<T>& values, DataType dtype) {
  auto t = runtime::Tensor::empty({int64_t(values.size())}, dtype);
  std::memcpy(t.data(), values.data(), t.nbytes());
  return t;
}

template <class T>
std::vector<T> valuesOf(const runtime::Tensor& t) {
  const T* p = static_cast<const T*>(t.data());
  return std::vector<T>(p, p + t.numel());
}

/// f's arguments after the evaluator ran it and after its compiled kernel did, each on fresh
/// arguments from `makeArgs`.
template <class MakeArgs>
std::pair<std::vector<runtime::Tensor>, std::vector<runtime::Tensor>> evaluateAndRun(const passes::LoweredFunction& f,
                                                                                     const MakeArgs& makeArgs) {
  auto evaluated = makeArgs(), compiled = makeArgs();
  kernelcheck::LoopIrEvaluator(f).run(evaluated);
  TempDir dir("tessel-evaluator-test");
  codegen::compileSharedLibrary(codegen::generateCSource({f}), dir.path() + "/k.so");
  runtime::Module::load(dir.path() + "/k.so").kernel(f.name).call(compiled);
  return {evaluated, compiled};
}

/// The integer operations whose C semantics differ from the obvious: truncating `/` and `%`
/// against the floor forms on negative operands, narrow types wrapping, float-to-int casts
/// truncating, min/max/select, C's `/` on int8 giving an int. out[9 * i + k] is operation k on
/// a[i], b[i].
passes::LoweredFunction integerSemantics() {
  Buffer a = argument("a", DataType::int32(), 6), b = argument("b", DataType::int32(), 6);
  Buffer out = argument("out", DataType::int32(), 54), small = argument("small", DataType::int8(), 6);
  Var i("i");
  Expr x = load(a, i), y = load(b, i);
  auto at = [&](int k) { return i * Expr(9) + Expr(k); };
  Expr narrowX = cast(DataType::int8(), x), narrowY = cast(DataType::int8(), y);
  std::vector<Stmt> body = {
      makeStore(out, at(0), truncdiv(x, y)),
      makeStore(out, at(1), truncmod(x, y)),
      makeStore(out, at(2), floordiv(x, y)),
      makeStore(out, at(3), floormod(x, y)),
      makeStore(out, at(4), cast(DataType::int32(), narrowX * narrowY * cast(DataType::int8(), Expr(int64_t(40))))),
      makeStore(out, at(5), cast(DataType::int32(), cast(DataType::float32(), x) / cast(DataType::float32(), y) * Expr(2.5f))),
      makeStore(out, at(6), select(x < y, ir::max(x, y), ir::min(x, y) - y)),
      makeStore(out, at(7), cast(DataType::int32(), call(Intrinsic::Abs, {x})) * Expr(int32_t(1 << 28))),
      makeStore(out, at(8), cast(DataType::int32(), truncdiv(narrowX, narrowY))),
      makeStore(small, i, cast(DataType::int8(), x * Expr(int32_t(50)))),
  };
  return {"integer_semantics", {a, b, out, small}, 2, makeFor(i, Expr(int64_t(0)), Expr(int64_t(6)), ForKind::Serial, makeBlock(body))};
}

TEST(LoopIrEvaluator, IntegerArithmeticIsTheCompiledCodes) {
  auto f = integerSemantics();
  auto args = [] {
    return std::vector<runtime::Tensor>{tensorOf<int32_t>({-7, 7, -7, 9, -128, 100}, DataType::int32()),
                                        tensorOf<int32_t>({2, -2, -2, 4, -1, -3}, DataType::int32()),
                                        tensorOf<int32_t>(std::vector<int32_t>(54, 0), DataType::int32()),
                                        tensorOf<int8_t>(std::vector<int8_t>(6, 0), DataType::int8())};
  };
  auto [evaluated, compiled] = evaluateAndRun(f, args);
  EXPECT_EQ(valuesOf<int32_t>(evaluated[2]), valuesOf<int32_t>(compiled[2]));
  EXPECT_EQ(valuesOf<int8_t>(evaluated[3]), valuesOf<int8_t>(compiled[3]));
  // The cases the test is about, spelled out: -7 / 2 truncates to -3, floors to -4.
  auto got = valuesOf<int32_t>(evaluated[2]);
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.begin() + 4), (std::vector<int32_t>{-3, -1, -4, 1}));
  EXPECT_EQ(got[4 * 9 + 8], 128);  // int8 -128 / -1
}

/// float16 rounding (the evaluator's own conversion against the prelude's), the math calls,
/// float-to-int truncation, min and max: half[i] = a[i] as float16; out[6 * i + k] is
/// operation k on a[i].
passes::LoweredFunction floatSemantics(int64_t n) {
  Buffer a = argument("a", DataType::float32(), n);
  Buffer half = argument("half", DataType::float16(), n), out = argument("out", DataType::float32(), 6 * n);
  Var i("i");
  Expr x = load(a, i);
  auto at = [&](int k) { return i * Expr(6) + Expr(k); };
  std::vector<Stmt> body = {
      makeStore(half, i, cast(DataType::float16(), x)),
      makeStore(out, at(0), cast(DataType::float32(), load(half, i)) * Expr(3.0f)),
      makeStore(out, at(1), call(Intrinsic::Sigmoid, {x * Expr(1e-3f)}) + call(Intrinsic::Exp, {x * Expr(-1e-4f)})),
      makeStore(out, at(2), cast(DataType::float32(), cast(DataType::int32(), x * Expr(1e-3f)))),
      makeStore(out, at(3), call(Intrinsic::Round, {x * Expr(0.5f)}) + call(Intrinsic::Floor, {x * Expr(0.25f)})),
      makeStore(out, at(4), ir::min(x, Expr(100.0f)) - ir::max(x, Expr(-100.0f))),
      makeStore(out, at(5), call(Intrinsic::Rsqrt, {call(Intrinsic::Abs, {x}) + Expr(1.0f)})),
  };
  return {"float_semantics", {a, half, out}, 2, makeFor(i, Expr(int64_t(0)), Expr(n), ForKind::Serial, makeBlock(body))};
}

TEST(LoopIrEvaluator, FloatArithmeticIsTheCompiledCodes) {
  // Halves' edges: subnormals, ties to even, the largest half and past it, signed zero (no NaN:
  // its cast to int32 is an Error).
  std::vector<float> a = {0.0f, -0.0f, 1.0f, -2.5f, 3e-8f, 6.1e-5f, -5.96e-8f, 2049.0f, 2051.0f, 1.0009765625f + 0.00048828125f,
                          65504.0f, 65519.0f, 65520.0f, 1e6f, -7e4f, 12345.678f, 0.1f, -333.3f, 1e-3f};
  auto f = floatSemantics(int64_t(a.size()));
  auto args = [&] {
    return std::vector<runtime::Tensor>{tensorOf<float>(a, DataType::float32()),
                                        tensorOf<uint16_t>(std::vector<uint16_t>(a.size(), 0), DataType::float16()),
                                        tensorOf<float>(std::vector<float>(6 * a.size(), 0), DataType::float32())};
  };
  auto [evaluated, compiled] = evaluateAndRun(f, args);
  EXPECT_EQ(valuesOf<uint16_t>(evaluated[1]), valuesOf<uint16_t>(compiled[1]));
  auto got = valuesOf<float>(evaluated[2]), want = valuesOf<float>(compiled[2]);
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k] == want[k]) continue;  // infinities too
    EXPECT_NEAR(got[k], want[k], 1e-6 * std::max(1.0f, std::fabs(want[k]))) << "element " << k << " (a = " << a[k / 6] << ")";
  }
}

std::string errorOf(const passes::LoweredFunction& f, const std::vector<runtime::Tensor>& args) {
  return testsupport::errorOf([&] { kernelcheck::LoopIrEvaluator(f).run(args); });
}

std::string compileErrorOf(const passes::LoweredFunction& f) {
  return testsupport::errorOf([&] { kernelcheck::LoopIrEvaluator{f}; });
}

std::vector<runtime::Tensor> fourFloats() {
  return {tensorOf<float>({1, 2, 3, 4}, DataType::float32()), tensorOf<float>({0, 0, 0, 0}, DataType::float32())};
}

TEST(LoopIrEvaluator, AStoreOutOfBoundsIsAnError) {
  Buffer a = argument("a", DataType::float32(), 4), out = argument("out", DataType::float32(), 4);
  Var i("i");
  auto f = function("overrun", {a, out}, makeFor(i, Expr(int64_t(0)), Expr(int64_t(4)), ForKind::Vectorized,
                                                   makeStore(out, i + Expr(int64_t(1)), load(a, i))));
  EXPECT_EQ(errorOf(f, fourFloats()),
            "loop IR evaluator, function 'overrun': store out of bounds: buffer 'out' index 4 (of 4 elements)");
  // The same through a vector store of a dense ramp.
  auto vector = function("vector_overrun", {a, out}, makeStore(out, ramp(Expr(int64_t(1)), Expr(int64_t(1)), 4),
                                                                load(a, ramp(Expr(int64_t(0)), Expr(int64_t(1)), 4))));
  EXPECT_EQ(errorOf(vector, fourFloats()),
            "loop IR evaluator, function 'vector_overrun': store out of bounds: buffer 'out' index 4 (of 4 elements)");
}

TEST(LoopIrEvaluator, ALoadOutOfBoundsIsAnErrorUnlessItsGuardSkipsIt) {
  Buffer a = argument("a", DataType::float32(), 4), out = argument("out", DataType::float32(), 4);
  Var i("i");
  Expr shifted = i - Expr(int64_t(1));
  auto body = [&](Expr value) { return makeFor(i, Expr(int64_t(0)), Expr(int64_t(4)), ForKind::Serial, makeStore(out, i, value)); };
  EXPECT_EQ(errorOf(function("unguarded", {a, out}, body(load(a, shifted))), fourFloats()),
            "loop IR evaluator, function 'unguarded': load out of bounds: buffer 'a' index -1 (of 4 elements)");
  EXPECT_EQ(errorOf(function("guarded", {a, out}, body(ifThenElse(i >= Expr(int64_t(1)), load(a, shifted), Expr(0.0f)))), fourFloats()),
            "(no error)");
  // select evaluates both sides: the guard does not protect the load.
  EXPECT_EQ(errorOf(function("selected", {a, out}, body(select(i >= Expr(int64_t(1)), load(a, shifted), Expr(0.0f)))), fourFloats()),
            "loop IR evaluator, function 'selected': load out of bounds: buffer 'a' index -1 (of 4 elements)");
}

TEST(LoopIrEvaluator, AReadOfALocalNeverWrittenIsAnError) {
  Buffer a = argument("a", DataType::float32(), 4), out = argument("out", DataType::float32(), 4);
  Buffer local = makeBuffer("acc", DataType::float32(), {2}, BufferNode::Scope::Local);
  Var i("i");
  // acc[0] is written in each iteration, acc[1] only when i == 0: in the next iteration the
  // local is a fresh one again, as the C array declared in the loop body is.
  Stmt body = makeAllocate(local, makeBlock({makeStore(local, Expr(int64_t(0)), load(a, i)),
                                             makeIf(i == Expr(int64_t(0)), makeStore(local, Expr(int64_t(1)), load(a, i))),
                                             makeStore(out, i, load(local, Expr(int64_t(0))) + load(local, Expr(int64_t(1))))}));
  auto f = function("stale_local", {a, out}, makeFor(i, Expr(int64_t(0)), Expr(int64_t(4)), ForKind::Serial, body));
  EXPECT_EQ(errorOf(f, fourFloats()),
            "loop IR evaluator, function 'stale_local': load of an element never written: buffer 'acc' index 1 (of 2 elements)");
  // An output read before it is written (an accumulation without its init) is one too.
  auto g = function("no_init", {a, out}, makeFor(i, Expr(int64_t(0)), Expr(int64_t(4)), ForKind::Serial,
                                                 makeStore(out, i, load(out, i) + load(a, i))));
  EXPECT_EQ(errorOf(g, fourFloats()),
            "loop IR evaluator, function 'no_init': load of an element never written: buffer 'out' index 0 (of 4 elements)");
}

TEST(LoopIrEvaluator, DivisionByZeroAndUnknownIrAreErrors) {
  Buffer a = argument("a", DataType::float32(), 4), out = argument("out", DataType::float32(), 4);
  Var i("i");
  auto loop = [&](Stmt body) { return makeFor(i, Expr(int64_t(0)), Expr(int64_t(4)), ForKind::Serial, body); };
  EXPECT_EQ(errorOf(function("divide", {a, out}, loop(makeStore(out, floordiv(Expr(int64_t(3)), i), load(a, i)))), fourFloats()),
            "loop IR evaluator, function 'divide': integer division by zero (3 / 0)");
  // A tensor read by name is what lowering replaces; left over it cannot run.
  auto unlowered = function("unlowered", {a, out}, loop(makeStore(out, i, producerLoad("A", DataType::float32(), {i}))));
  testsupport::expectContains(compileErrorOf(unlowered), "an expression the evaluator does not know");
  Var j("j");
  auto unbound = function("unbound", {a, out}, loop(makeStore(out, j, load(a, i))));
  testsupport::expectContains(compileErrorOf(unbound), "variable 'j' is not bound by an enclosing loop");
  Buffer stray = makeBuffer("stray", DataType::float32(), {4}, BufferNode::Scope::Local);
  auto unallocated = function("unallocated", {a, out}, loop(makeStore(out, i, load(stray, i))));
  testsupport::expectContains(compileErrorOf(unallocated), "buffer 'stray' used outside its allocation");
}

TEST(LoopIrEvaluator, AnOutputNeverWrittenShowsInTheComparison) {
  auto dag = ops::matmul(2, 3, 4);
  auto f = passes::lower(schedule::State(dag), "k");
  auto data = kernelcheck::makeReferenceData(dag, 1);
  EXPECT_LT(kernelcheck::evaluateAndCompare(f, data), 1e-6);
  // Without its last row the output keeps its garbage (NaN): an infinite error.
  f.body = makeBlock({});
  EXPECT_EQ(kernelcheck::evaluateAndCompare(f, data), INFINITY);
}

}  // namespace
