// Compute DAGs as JSON (te/DagJson.h): what a tuning record carries so that the log alone can
// tell whether a record's steps apply. A DAG comes back exactly (names, types, the workload
// key); hostile JSON is an error naming the op and the place, never a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/ErrorText.h"
#include "support/Json.h"
#include "te/DagJson.h"

using namespace tessel;
using namespace tessel::te;
using namespace tessel::testsupport;
using nlohmann::json;

namespace {

/// Every expression kind a tensor expression can hold: padding with if_then_else over a
/// conjunction, casts, an intrinsic, a select, float constants including infinities, a
/// reduction with a condition, floor division and modulo, int32 constants.
ComputeDAG everyKind() {
  auto data = placeholder({1, 6, 6, 4}, DataType::float32(), "data");
  auto weight = placeholder({3, 3, 4, 8}, DataType::float32(), "weight");
  auto codes = placeholder({8}, DataType::int32(), "codes");
  auto pad = compute(
      {1, 8, 8, 4},
      [&](const std::vector<Var>& i) {
        Expr inside = i[1] >= 1 && i[1] < 7 && i[2] >= 1 && i[2] < 7;
        return ir::ifThenElse(inside, data(i[0], i[1] - 1, i[2] - 1, i[3]), Expr(0.0f));
      },
      "pad", "injective,pad", {"n", "y", "x", "c"});
  auto ry = reduceAxis(3, "ry"), rx = reduceAxis(3, "rx"), rc = reduceAxis(4, "rc");
  auto conv = compute(
      {1, 6, 6, 8},
      [&](const std::vector<Var>& i) {
        return sum(pad(i[0], i[1] + ry.var, i[2] + rx.var, rc.var) * weight(ry.var, rx.var, rc.var, i[3]), {ry, rx, rc},
                   rc.var != Expr(int64_t(3)));
      },
      "conv", "conv2d_nhwc", {"nn", "yy", "xx", "ff"});
  auto mixed = compute(
      {1, 6, 6, 8},
      [&](const std::vector<Var>& i) {
        Expr scale = ir::cast(DataType::float32(), codes(ir::floormod(i[3] + 5, Expr(int64_t(8)))));
        Expr clipped = ir::min(ir::max(conv(i[0], i[1], i[2], i[3]) * scale, Expr(-std::numeric_limits<float>::infinity())),
                               Expr(6.0f));
        Expr odd = ir::cast(DataType::int32(), ir::floordiv(i[1], Expr(int64_t(2)))) > ir::intImm(DataType::int32(), 1);
        return ir::select(!odd, ir::call(ir::Intrinsic::Exp, {clipped}), ir::call(ir::Intrinsic::Pow, {clipped, Expr(2.0f)}));
      },
      "mixed", "elemwise");
  return ComputeDAG({mixed}, {data, weight, codes});
}

TEST(DagJson, RoundTripIsExact) {
  ComputeDAG dag = everyKind();
  json j = dagToJson(dag);
  ComputeDAG back = dagFromJson(j);
  EXPECT_EQ(back.workloadKey(), dag.workloadKey());
  EXPECT_EQ(back.toString(), dag.toString());
  EXPECT_EQ(back.inputNames(), dag.inputNames());
  EXPECT_EQ(back.outputNames(), dag.outputNames());
  ASSERT_EQ(back.ops().size(), dag.ops().size());
  for (size_t i = 0; i < dag.ops().size(); ++i) {
    EXPECT_EQ(back.ops()[i]->name, dag.ops()[i]->name);
    EXPECT_EQ(back.ops()[i]->tag, dag.ops()[i]->tag);
    EXPECT_EQ(back.ops()[i]->dtype, dag.ops()[i]->dtype);
    for (size_t a = 0; a < dag.ops()[i]->axes.size(); ++a)
      EXPECT_EQ(back.ops()[i]->axes[a].var.name(), dag.ops()[i]->axes[a].var.name());
  }
  EXPECT_EQ(back.flopCount(), dag.flopCount());
  // Through text, as a record carries it.
  EXPECT_EQ(dagFromJson(parseJson(j.dump(), "dag")).workloadKey(), dag.workloadKey());
  EXPECT_EQ(dagToJson(back), j);
}

TEST(DagJson, NonFiniteConstantsAreStrings) {
  auto a = placeholder({4}, DataType::float32(), "a");
  auto b = compute({4}, [&](const std::vector<Var>& i) {
    return ir::max(a(i[0]), ir::floatImm(DataType::float32(), -std::numeric_limits<double>::infinity()));
  }, "b");
  json j = dagToJson(ComputeDAG({b}, {a}));
  EXPECT_NE(j.dump().find("\"-inf\""), std::string::npos) << j.dump();
  EXPECT_EQ(dagFromJson(j).workloadKey(), ComputeDAG({b}, {a}).workloadKey());
}

/// A small valid DAG as JSON to break in the tests below.
json matmulJson() {
  auto A = placeholder({4, 4}, DataType::float32(), "A");
  auto B = placeholder({4, 4}, DataType::float32(), "B");
  auto k = reduceAxis(4, "k");
  auto C = compute({4, 4}, [&](const std::vector<Var>& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); }, "C");
  return dagToJson(ComputeDAG({C}, {A, B}));
}

TEST(DagJson, HostileInputIsAnErrorNamingTheOpAndThePlace) {
  auto broken = [](auto edit) {
    json j = matmulJson();
    edit(j);
    return errorOf([&] { dagFromJson(j); });
  };
  expectContains(broken([](json& j) { j["ops"][2]["body"][2][1][1] = "Z"; }), "op 'C'.body: reads 'Z', which is not an op defined before this one");
  expectContains(broken([](json& j) { j["ops"][2]["body"][2][1].push_back(0); }), "reads 'A' with 3 indices; it has 2 dimensions");
  expectContains(broken([](json& j) { j["ops"][2]["body"][2][2][2] = json::array({"var", 7}); }), "var index: 7 is out of range [0, 2]");
  expectContains(broken([](json& j) { j["ops"][2]["body"][2][0] = "fma"; }), "unknown node kind 'fma'");
  expectContains(broken([](json& j) { j["ops"][2]["body"][2][2] = json::array({"int", "int32", 1}); }), "'mul' of float32 and int32");
  expectContains(broken([](json& j) { j["ops"][2]["dtype"] = "int8"; }), "op 'C': the body is float32, the op int8");
  expectContains(broken([](json& j) { j["ops"][2]["dtype"] = "float32x4"; }), "a tensor expression is scalar, got float32x4");
  expectContains(broken([](json& j) { j["ops"][0]["shape"] = json::array({4, -1}); }), "op 'A'.shape[1]: -1 is out of range");
  expectContains(broken([](json& j) { j["ops"][0]["shape"] = json::array({4, 1e23}); }), "expected an integer");
  expectContains(broken([](json& j) { j["ops"][1]["name"] = "A"; }), "'A' is defined twice");
  expectContains(broken([](json& j) { j["inputs"] = json::array({"A"}); }), "placeholder 'B' is not listed as an input");
  expectContains(broken([](json& j) { j["outputs"] = json::array({"A"}); }), "output 'A' is not a computation of the DAG");
  expectContains(broken([](json& j) { j["ops"][2]["reduce_axes"] = json::array(); }), "1 to 16 [name, extent] pairs");
  expectContains(broken([](json& j) { j["ops"][2]["axes"] = json::array({"i"}); }), "one name per dimension (2)");
  expectContains(broken([](json& j) {
                   j["ops"][2].erase("reduce_axes");
                   j["ops"][2]["body"] = json::array({"add", j["ops"][2]["body"], 1});
                 }),
                 "a reduction must be the whole body of its op");
  expectContains(broken([](json& j) { j.erase("ops"); }), "dag: missing field 'ops'");
  // Nesting deep enough to exhaust a stack is refused before it can.
  json deep = json::array({"var", 0});
  for (int i = 0; i < 1000; ++i) deep = json::array({"not", std::move(deep)});
  expectContains(broken([&](json& j) { j["ops"][2]["body"][2] = deep; }), "expressions nest deeper than 256");
}

}  // namespace
