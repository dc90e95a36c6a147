// Schedule fuzzing: random valid step lists over the example ops, every one replayed from its
// JSON, lowered, compiled, run and compared with the reference evaluator.
//
// Environment: TESSEL_FUZZ_SEED (default: random, printed), TESSEL_FUZZ_CASES (default 500;
// fewer under sanitizers), TESSEL_FUZZ_ONLY=<index> to replay one case (with
// TESSEL_DUMP_SOURCE=1 to print its state and C source), TESSEL_FUZZ_BATCH (cases per
// compiled library, default 25).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "fuzz/FuzzRun.h"

using namespace tessel;

#ifndef TESSEL_FUZZ_DEFAULT_CASES
#define TESSEL_FUZZ_DEFAULT_CASES 500
#endif

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

}  // namespace

TEST(ScheduleFuzz, RandomStepListsMatchReference) {
  fuzz::FuzzConfig config;
  config.seed = envSeed();
  config.cases = int(envInt("TESSEL_FUZZ_CASES", TESSEL_FUZZ_DEFAULT_CASES));
  config.only = int(envInt("TESSEL_FUZZ_ONLY", -1));
  config.batchSize = int(envInt("TESSEL_FUZZ_BATCH", 25));
  config.dumpSource = std::getenv("TESSEL_DUMP_SOURCE") != nullptr;
  std::printf("[ fuzz     ] seed %llu, %d cases (replay: TESSEL_FUZZ_SEED=%llu TESSEL_FUZZ_CASES=%d)\n",
              static_cast<unsigned long long>(config.seed), config.cases, static_cast<unsigned long long>(config.seed),
              config.cases);
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

  // The lists must be rich: every kind of step shows up in a full run, several per list.
  if (config.only < 0 && config.cases >= 200) {
    for (auto& label : fuzz::allStepLabels())
      EXPECT_GT(report.stats.accepted[label], 0) << "the generator never produced a " << label << " step";
    EXPECT_GE(double(report.stats.steps) / double(report.stats.lists), 4.0);
  }
}
