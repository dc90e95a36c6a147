// driver::ShippedRecordsUse: which shipped records a build takes — the target's class's log,
// none where a CPU log was measured with other cores, none when turned off — and what it says.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "driver/ShippedRecordsUse.h"
#include "tune/ShippedRecords.h"

namespace tessel::driver {
namespace {

ShippedRecordsUse cpuUse(const std::string& text) {
  target::Target target = target::Target::parse(text);
  return ShippedRecordsUse::of(tune::shippedRecordSetForCpu(target), target);
}

TEST(ShippedRecordsUse, ACpuLogServesTargetsOfItsCoreCountOnly) {
  // The AVX-512 log was measured on a machine of its own core count: a target of that count
  // takes it, one of another count gets the default schedules and is told why.
  ShippedRecordsUse probe = cpuUse("cpu -mcpu=skylake-avx512");
  ASSERT_FALSE(probe.set.empty());
  ASSERT_FALSE(tune::shippedRecords(probe.set).empty());
  ASSERT_TRUE(tune::shippedRecords(probe.set).front().machine.has_value());
  const int64_t cores = tune::shippedRecords(probe.set).front().machine->cores;
  ShippedRecordsUse fits = cpuUse(fmt::format("cpu -mcpu=skylake-avx512 -num-cores={}", cores));
  EXPECT_TRUE(fits.available);
  EXPECT_TRUE(fits.unfit.empty());
  auto best = fits.historyBest("", target::Target::parse(fmt::format("cpu -mcpu=skylake-avx512 -num-cores={}", cores)));
  ASSERT_TRUE(best.has_value());
  EXPECT_GT(best->size(), 0u);
  EXPECT_NE(fits.summary(best, "cpu").find("using shipped records for cpu (" + fits.set + "): 0 of 0 kernels"), std::string::npos);

  ShippedRecordsUse other = cpuUse(fmt::format("cpu -mcpu=skylake-avx512 -num-cores={}", cores + 14));
  EXPECT_FALSE(other.available);
  EXPECT_TRUE(other.records.empty());
  testsupport::expectContains(other.unfit, fmt::format("measured on a {}-core", cores));
  EXPECT_FALSE(other.historyBest("", target::Target::parse("cpu -mcpu=skylake-avx512")).has_value());
  testsupport::expectContains(other.summary(std::nullopt, "cpu"), "not used: they were measured on a");
}

TEST(ShippedRecordsUse, OffSaysNothingAndAClassWithoutALogSaysWhichShip) {
  ShippedRecordsUse off;
  EXPECT_EQ(off.summary(std::nullopt, "cpu"), "");
  EXPECT_TRUE(off.skipped(std::nullopt).empty());
  ShippedRecordsUse none{"cpu/no-such-class", {}, false, ""};
  testsupport::expectContains(none.summary(std::nullopt, "cpu"), "no shipped records for cpu (cpu/no-such-class): tessel ships records for");
  target::Target cuda = target::Target::parse("cuda");
  ShippedRecordsUse gpu = ShippedRecordsUse::of(tune::shippedRecordSetForGpu(cuda), cuda);
  EXPECT_TRUE(gpu.available) << "records/cuda/sm_90.log";
  EXPECT_TRUE(gpu.unfit.empty());
}

}  // namespace
}  // namespace tessel::driver
