// A graph's parameters through a params file: the round trip, and every way a file can fail
// to fit (missing, truncated, a parameter missing or extra, a wrong shape or dtype, a file of
// the other layout) — each an error naming the file and the problem, the graph unchanged.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "common/ErrorText.h"
#include "graph/GraphParams.h"
#include "graph/ModelZoo.h"
#include "runtime/Params.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

/// SqueezeNet 1.1 with 10 classes: 0.7 million parameters, quick to write and read.
Graph smallNet(uint64_t seed = 0, ops::Layout layout = ops::Layout::NCHW) {
  ModelOptions o;
  o.imageSize = 32;
  o.classes = 10;
  o.seed = seed;
  o.layout = layout;
  return buildModel("squeezenet_v1.1", o);
}

bool sameValues(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

/// Every constant of `a` equals `b`'s of the same name.
bool sameParams(const Graph& a, const Graph& b) {
  if (a.params().size() != b.params().size()) return false;
  for (const auto& [name, value] : a.params())
    if (!b.params().count(name) || !sameValues(value, b.params().at(name))) return false;
  return true;
}

TEST(GraphParams, RoundTripReplacesEveryConstant) {
  TempDir dir;
  std::string path = dir.path() + "/net.params";
  Graph original = smallNet(0);
  saveGraphParams(original, path);
  Graph other = smallNet(7);  // other weights, the same names and types
  ASSERT_FALSE(sameParams(original, other));
  loadGraphParams(other, path);
  EXPECT_TRUE(sameParams(original, other));
  // Saving again gives the same bytes (entries in name order).
  saveGraphParams(other, dir.path() + "/again.params");
  EXPECT_EQ(readFile(path), readFile(dir.path() + "/again.params"));
}

TEST(GraphParams, MissingOrTruncatedFileIsAnErrorNamingIt) {
  TempDir dir;
  Graph g = smallNet();
  std::string missing = dir.path() + "/absent.params";
  std::string message = errorOf([&] { loadGraphParams(g, missing); });
  expectContains(message, missing);
  expectContains(message, "cannot read");

  std::string path = dir.path() + "/cut.params";
  saveGraphParams(g, path);
  std::string bytes = readFile(path);
  writeFile(path, bytes.substr(0, bytes.size() / 2));
  Graph other = smallNet(7);
  message = errorOf([&] { loadGraphParams(other, path); });
  expectContains(message, path);
  expectContains(message, "truncated");
  EXPECT_FALSE(sameParams(g, other));  // nothing replaced

  writeFile(path, "not a params file at all");
  expectContains(errorOf([&] { loadGraphParams(other, path); }), "not a tessel parameters file");
}

TEST(GraphParams, MissingExtraAndMistypedParametersAreNamed) {
  TempDir dir;
  Graph g = smallNet();
  std::string path = dir.path() + "/edited.params";
  auto write = [&](auto edit) {
    runtime::NamedTensors params = g.params();
    edit(params);
    runtime::saveParams(params, path);
  };
  Graph target = smallNet(7);
  const Graph before = smallNet(7);

  write([](runtime::NamedTensors& p) { p.erase("conv10_bias"); });
  std::string message = errorOf([&] { loadGraphParams(target, path); });
  expectContains(message, path);
  expectContains(message, "1 parameter missing from the file: 'conv10_bias'");

  write([](runtime::NamedTensors& p) { p["extra_weight"] = runtime::Tensor::empty({3}, DataType::float32()); });
  expectContains(errorOf([&] { loadGraphParams(target, path); }), "1 parameter in the file that the graph does not have: 'extra_weight'");

  write([](runtime::NamedTensors& p) { p["conv10_weight"] = runtime::Tensor::empty({10, 256, 1, 1}, DataType::float32()); });
  message = errorOf([&] { loadGraphParams(target, path); });
  expectContains(message, "1 parameter of the wrong shape or dtype: 'conv10_weight': expected float32[10, 512, 1, 1], got float32[10, 256, 1, 1]");
  EXPECT_EQ(message.find("layout"), std::string::npos) << message;  // no permutation: no layout hint

  write([](runtime::NamedTensors& p) { p["conv10_bias"] = runtime::Tensor::empty({10}, DataType::int32()); });
  expectContains(errorOf([&] { loadGraphParams(target, path); }), "'conv10_bias': expected float32[10], got int32[10]");

  // Several problems at once: all named; many names: the first few and a count.
  write([](runtime::NamedTensors& p) {
    for (auto it = p.begin(); it != p.end();) it = it->first.rfind("fire9", 0) == 0 ? p.erase(it) : std::next(it);
    p["unknown"] = runtime::Tensor::empty({1}, DataType::float32());
  });
  message = errorOf([&] { loadGraphParams(target, path); });
  expectContains(message, "6 parameters missing from the file: 'fire9_expand1x1_bias', 'fire9_expand1x1_weight'");
  expectContains(message, "and 1 more");
  expectContains(message, "'unknown'");
  EXPECT_TRUE(sameParams(target, before));  // no failed load replaced anything
}

TEST(GraphParams, AFileOfTheOtherLayoutSaysParamsAreLayoutSpecific) {
  TempDir dir;
  std::string path = dir.path() + "/nchw.params";
  saveGraphParams(smallNet(0, ops::Layout::NCHW), path);
  Graph nhwc = smallNet(0, ops::Layout::NHWC);
  std::string message = errorOf([&] { loadGraphParams(nhwc, path); });
  expectContains(message, "'conv1_weight': expected float32[3, 3, 3, 64], got float32[64, 3, 3, 3]");
  expectContains(message, "a params file is layout-specific");
  expectContains(message, "the other layout");
}

TEST(GraphParams, SetConstantChecksTheType) {
  Graph g = smallNet();
  int fc = g.findNode("conv10_bias");
  std::string message = errorOf([&] { g.setConstant(fc, runtime::Tensor::empty({11}, DataType::float32())); });
  expectContains(message, "constant 'conv10_bias': expected float32[10], got float32[11]");
  expectContains(errorOf([&] { g.setConstant(g.findNode("conv10"), runtime::Tensor::empty({10}, DataType::float32())); }),
                 "node 'conv10' is not a constant");
  auto value = runtime::Tensor::empty({10}, DataType::float32());
  for (int i = 0; i < 10; ++i) value.dataAs<float>()[i] = float(i);
  g.setConstant(fc, value);
  EXPECT_EQ(g.constant(fc).dataAs<float>()[3], 3.0f);
}

}  // namespace
