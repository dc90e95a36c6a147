// driver::buildNetwork's option checks: every bad option of a CPU or GPU build is an Error naming
// `tessel compile`'s flag before any work — the model here is empty, so a check that came after
// the build had started would fail on the graph instead.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/ErrorText.h"
#include "driver/BuildNetwork.h"
#include "support/TempDir.h"

namespace tessel::driver {
namespace {

using testsupport::errorOf;

/// A bad option on a target: how it is set, and the message (or its start) it must fail with.
struct BadOption {
  std::string target;
  std::function<void(BuildNetworkOptions&)> set;
  std::string message;
};

void expectEachFailsBeforeAnyWork(const std::vector<BadOption>& cases) {
  TempDir dir("tessel-build-network");
  for (const BadOption& c : cases) {
    BuildNetworkOptions options;
    options.prepare.target = target::Target::parse(c.target);
    options.output = dir.path() + "/module";
    c.set(options);
    std::string error = errorOf([&] { buildNetwork(options); });
    EXPECT_EQ(error.substr(0, c.message.size()), c.message) << c.target;
  }
}

TEST(BuildNetwork, BadGpuOptionsFailBeforeAnyWork) {
  expectEachFailsBeforeAnyWork({
      {"cuda", [](auto& o) { o.channelTile = "3"; }, "--channel-tile: '3' is not auto, 1, 2 or 4"},
      {"opencl", [](auto& o) { o.reductionParts = "32"; }, "--reduction-parts: '32' is not auto, 1, 2, 4, 8 or 16"},
      {"opencl", [](auto& o) { o.naive = true; },
       "--naive: a GPU kernel needs its loops bound to blocks and threads; the naive schedule has none"},
      {"opencl",
       [](auto& o) {
         o.records = "tuned.log";
         o.channelTile = "2";
       },
       "--channel-tile and --reduction-parts set the default GPU schedule; with --records the records choose them"},
      {"opencl", [](auto& o) { o.targetHost = "mali"; }, "--target-host 'mali' with --target 'opencl': not a CPU target"},
  });
}

TEST(BuildNetwork, GpuOptionsAreRefusedForCpuTargets) {
  expectEachFailsBeforeAnyWork({
      {"cpu", [](auto& o) { o.channelTile = "2"; }, "--channel-tile applies to GPU targets (cuda, opencl)"},
      {"cpu", [](auto& o) { o.reductionParts = "4"; }, "--reduction-parts applies to GPU targets (cuda, opencl)"},
      {"cpu", [](auto& o) { o.targetHost = "cpu -mcpu=skylake"; }, "--target-host applies to GPU targets (cuda, opencl)"},
      {"cpu",
       [](auto& o) {
         o.naive = true;
         o.records = "tuned.log";
       },
       "--records and --naive exclude each other"},
  });
}

}  // namespace
}  // namespace tessel::driver
