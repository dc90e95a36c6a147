#include <gtest/gtest.h>

#include <cstring>

#include "common/ErrorText.h"
#include "runtime/Params.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::testsupport;
using namespace tessel::runtime;

namespace {

NamedTensors sampleParams() {
  auto w = Tensor::empty({2, 3}, DataType::float32());
  for (int i = 0; i < 6; ++i) w.dataAs<float>()[i] = float(i) * 0.5f - 1.0f;
  auto b = Tensor::empty({3}, DataType::int8());
  b.dataAs<int8_t>()[0] = -128;
  b.dataAs<int8_t>()[1] = 0;
  b.dataAs<int8_t>()[2] = 127;
  auto s = Tensor::empty({}, DataType::int64());
  s.dataAs<int64_t>()[0] = int64_t(1) << 40;
  return {{"conv1_weight", w}, {"bias", b}, {"scalar", s}};
}

std::string savedBytes(const NamedTensors& params) {
  TempDir dir;
  saveParams(params, dir.path() + "/p.params");
  return readFile(dir.path() + "/p.params");
}

TEST(Params, RoundTripKeepsNamesShapesDtypesAndBytes) {
  auto params = sampleParams();
  TempDir dir;
  saveParams(params, dir.path() + "/p.params");
  auto loaded = loadParams(dir.path() + "/p.params");
  ASSERT_EQ(loaded.size(), params.size());
  for (auto& [name, t] : params) {
    ASSERT_TRUE(loaded.count(name)) << name;
    const Tensor& l = loaded.at(name);
    EXPECT_EQ(l.dtype(), t.dtype()) << name;
    EXPECT_EQ(l.shape(), t.shape()) << name;
    EXPECT_EQ(std::memcmp(l.data(), t.data(), t.nbytes()), 0) << name;
  }
  // Deterministic: saving what was loaded gives the same bytes.
  EXPECT_EQ(savedBytes(loaded), savedBytes(params));
}

TEST(Params, EmptySetRoundTrips) {
  EXPECT_TRUE(parseParams(savedBytes({}), "x").empty());
}

TEST(Params, TruncationAtEveryByteIsAClearError) {
  std::string bytes = savedBytes(sampleParams());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string message = errorOf([&] { parseParams(bytes.substr(0, n), "net.params"); });
    expectContains(message, "net.params");
    if (n >= 8) expectContains(message, "truncated");
  }
}

TEST(Params, CorruptHeadersNameTheProblem) {
  std::string bytes = savedBytes(sampleParams());
  std::string badMagic = bytes;
  badMagic[0] = 'X';
  expectContains(errorOf([&] { parseParams(badMagic, "a.params"); }), "not a tessel parameters file");
  std::string badVersion = bytes;
  badVersion[8] = 9;
  expectContains(errorOf([&] { parseParams(badVersion, "a.params"); }), "format version 9 is not supported");
  std::string trailing = bytes + "x";
  expectContains(errorOf([&] { parseParams(trailing, "a.params"); }), "unexpected bytes after the last parameter");
  // The first entry (names are sorted: "bias") starts at byte 20: length 4, "bias", dtype, rank.
  std::string badRank = bytes;
  badRank[20 + 4 + 4 + 4] = 100;
  std::string message = errorOf([&] { parseParams(badRank, "a.params"); });
  expectContains(message, "invalid rank 100");
  expectContains(message, "parameter 'bias'");
  std::string badCount = bytes;
  badCount[20 + 4 + 4 + 4 + 4 + 8] = 7;  // the byte count of "bias" (3 bytes of int8)
  expectContains(errorOf([&] { parseParams(badCount, "a.params"); }), "byte count 7 does not match int8 [3]");
}

TEST(Params, MissingFileNamesThePath) {
  expectContains(errorOf([] { loadParams("/nonexistent/dir/x.params"); }), "/nonexistent/dir/x.params");
}

}  // namespace
