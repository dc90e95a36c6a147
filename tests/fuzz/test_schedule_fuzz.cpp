// Schedule fuzzing: random valid step lists over the example ops, every one replayed from its
// JSON, lowered, compiled, run and compared with the reference evaluator, in shards (tests of
// their own) per target.
//
// Environment: TESSEL_FUZZ_SEED (default: random, printed), TESSEL_FUZZ_CASES (this machine's
// cases, default 500, split over its shards), TESSEL_FUZZ_ONLY=<index> to replay one case (with
// TESSEL_DUMP_SOURCE=1 to print its state and C source), TESSEL_FUZZ_BATCH (cases per
// compiled library, default 25), TESSEL_FUZZ_TARGET_CASES (cases of each other x86 target,
// default 150). The sanitizer build runs as many: most of a case's time is the kernel's compile,
// which the sanitizers do not slow.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "fuzz/FuzzRun.h"
#include "target/CpuRequirements.h"
#include "target/HostCpu.h"

using namespace tessel;

constexpr int kDefaultCases = 500;
constexpr int kDefaultTargetCases = 150;

namespace {

int64_t envInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::stoll(text) : fallback;
}

uint64_t envSeed() {
  const char* text = std::getenv("TESSEL_FUZZ_SEED");
  if (text && *text) return std::stoull(text);
  std::random_device device;
  return (uint64_t(device()) << 32) ^ device();
}

/// The seed, the replay and the batch size from the environment; the cases are the shard's.
fuzz::FuzzConfig configFromEnvironment() {
  fuzz::FuzzConfig config;
  config.seed = envSeed();
  config.only = int(envInt("TESSEL_FUZZ_ONLY", -1));
  config.batchSize = int(envInt("TESSEL_FUZZ_BATCH", 25));
  config.dumpSource = std::getenv("TESSEL_DUMP_SOURCE") != nullptr;
  return config;
}

}  // namespace

/// A part of a fuzz run: the cases of one target are split into shards, each a test of its own,
/// so that ctest runs them side by side and none runs long (500 cases under the sanitizers take
/// about two minutes). Case i is the same whichever shard runs it (its seed is the run's and i).
struct FuzzShard {
  const char* target;  ///< "" for this machine
  int shard, shards;
};

void PrintTo(const FuzzShard& shard, std::ostream* out) {
  *out << (*shard.target ? shard.target : "this CPU") << ", shard " << shard.shard + 1 << " of " << shard.shards;
}

std::string shardName(const ::testing::TestParamInfo<FuzzShard>& info) {
  std::string target = *info.param.target ? info.param.target + std::string(info.param.target).rfind('=') + 1 : "host";
  for (char& c : target)
    if (c == '-') c = '_';
  return fmt::format("{}_{}_of_{}", target, info.param.shard + 1, info.param.shards);
}

class ScheduleFuzz : public ::testing::TestWithParam<FuzzShard> {};

// This machine's CPU in four shards; the other x86 ISAs this CPU runs in two shards each: AVX2
// (haswell: 32-byte vectors, 16 registers) and the x86-64 baseline (16-byte SSE vectors), so that
// the vector code of each class is checked wherever the suite runs (an AVX-512 host included),
// with fewer cases each.
TEST_P(ScheduleFuzz, RandomStepListsMatchReference) {
  const FuzzShard& shard = GetParam();
  bool host = *shard.target == 0;
  int total = host ? int(envInt("TESSEL_FUZZ_CASES", kDefaultCases))
                   : int(envInt("TESSEL_FUZZ_TARGET_CASES", kDefaultTargetCases));
  fuzz::FuzzConfig config = configFromEnvironment();
  if (!host) {
    const auto& cpu = target::hostCpu();
    if (cpu.arch != "x86_64") GTEST_SKIP() << "not an x86-64 CPU";
    config.target = target::Target::parse(shard.target);
    auto missing = target::CpuRequirements::of(config.target.cpu).missingOn(cpu.arch, cpu.features);
    // The baseline runs on every x86-64 CPU; AVX2 wherever the CPU has it.
    ASSERT_TRUE(missing.empty() || std::string(shard.target) != "cpu -mcpu=x86-64");
    if (!missing.empty()) GTEST_SKIP() << "this CPU cannot run " << shard.target << " code";
  }
  config.first = total * shard.shard / shard.shards;
  config.cases = total * (shard.shard + 1) / shard.shards - config.first;
  std::printf("[ fuzz     ] %s: seed %llu, cases %d to %d of %d (replay: TESSEL_FUZZ_SEED=%llu %s=%d)\n",
              host ? "this CPU" : shard.target, static_cast<unsigned long long>(config.seed), config.first,
              config.first + config.cases - 1, total, static_cast<unsigned long long>(config.seed),
              host ? "TESSEL_FUZZ_CASES" : "TESSEL_FUZZ_TARGET_CASES", total);
  std::fflush(stdout);
  RecordProperty("seed", std::to_string(config.seed));

  auto start = std::chrono::steady_clock::now();
  fuzz::FuzzReport report = fuzz::runFuzz(config);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("[ fuzz     ] %s", report.stats.table().c_str());
  std::printf("[ fuzz     ] %d cases checked in %.1f s (prepare %.1f s, compile %.1f s in %d libraries, run %.1f s)\n",
              report.checked, seconds, report.prepareSeconds, report.compileSeconds, report.libraries, report.runSeconds);
  for (auto& failure : report.failures) ADD_FAILURE() << failure;
  EXPECT_EQ(report.failures.size(), 0u) << "seed " << config.seed;
  if (config.only < 0) {
    EXPECT_GT(report.checked, config.cases / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, ScheduleFuzz,
                         ::testing::Values(FuzzShard{"", 0, 4}, FuzzShard{"", 1, 4}, FuzzShard{"", 2, 4}, FuzzShard{"", 3, 4},
                                           FuzzShard{"cpu -mcpu=haswell", 0, 2}, FuzzShard{"cpu -mcpu=haswell", 1, 2},
                                           FuzzShard{"cpu -mcpu=x86-64", 0, 2}, FuzzShard{"cpu -mcpu=x86-64", 1, 2}),
                         shardName);

// The lists must be rich: every kind of step shows up in a run's cases, several per list. The
// generator alone (no lowering, no compiler), over the cases of a whole run of this machine.
TEST(ScheduleFuzzGenerator, EveryKindOfStepShowsUpInARunsCases) {
  fuzz::FuzzConfig config = configFromEnvironment();
  config.cases = int(envInt("TESSEL_FUZZ_CASES", kDefaultCases));
  if (config.cases < 200) GTEST_SKIP() << "fewer than 200 cases: too few to expect every kind of step";
  auto ops = fuzz::fuzzOps();
  fuzz::StepStats stats;
  for (int i = 0; i < config.cases; ++i) fuzz::generateSteps(ops[size_t(i) % ops.size()].dag, fuzz::caseSeed(config.seed, i), stats);
  for (auto& label : fuzz::allStepLabels())
    EXPECT_GT(stats.accepted[label], 0) << "the generator never produced a " << label << " step (seed " << config.seed << ")";
  EXPECT_GE(double(stats.steps) / double(stats.lists), 4.0);
}
