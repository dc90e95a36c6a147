// Schedule fuzzing: random valid step lists over the example ops, every one replayed from its
// JSON, lowered, compiled, run and compared with the reference evaluator.
//
// Environment: TESSEL_FUZZ_SEED (default: random, printed), TESSEL_FUZZ_CASES (default 500;
// fewer under sanitizers), TESSEL_FUZZ_ONLY=<index> to replay one case (with
// TESSEL_DUMP_SOURCE=1 to print its state and C source), TESSEL_FUZZ_BATCH (cases per
// compiled library, default 25), TESSEL_FUZZ_TARGET_CASES (cases of each other x86 target,
// default 150; fewer under sanitizers).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "fuzz/FuzzRun.h"
#include "target/CpuRequirements.h"
#include "target/HostCpu.h"

using namespace tessel;

#ifndef TESSEL_FUZZ_DEFAULT_CASES
#define TESSEL_FUZZ_DEFAULT_CASES 500
#endif
#ifndef TESSEL_FUZZ_DEFAULT_TARGET_CASES
#define TESSEL_FUZZ_DEFAULT_TARGET_CASES 150
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

fuzz::FuzzConfig configFromEnvironment(int defaultCases) {
  fuzz::FuzzConfig config;
  config.seed = envSeed();
  config.cases = int(envInt("TESSEL_FUZZ_CASES", defaultCases));
  config.only = int(envInt("TESSEL_FUZZ_ONLY", -1));
  config.batchSize = int(envInt("TESSEL_FUZZ_BATCH", 25));
  config.dumpSource = std::getenv("TESSEL_DUMP_SOURCE") != nullptr;
  return config;
}

}  // namespace

TEST(ScheduleFuzz, RandomStepListsMatchReference) {
  fuzz::FuzzConfig config = configFromEnvironment(TESSEL_FUZZ_DEFAULT_CASES);
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

// The same kernels compiled for the other x86 ISAs this CPU runs: AVX2 (haswell: 32-byte
// vectors, 16 registers) and the x86-64 baseline (16-byte SSE vectors), so that the vector code
// of each class is checked wherever the suite runs (an AVX-512 host included). Fewer cases each.
TEST(ScheduleFuzz, RandomStepListsMatchReferenceOnEveryX86Class) {
  const auto& host = target::hostCpu();
  if (host.arch != "x86_64") GTEST_SKIP() << "not an x86-64 CPU";
  int checked = 0;
  for (const char* text : {"cpu -mcpu=haswell", "cpu -mcpu=x86-64"}) {
    fuzz::FuzzConfig config = configFromEnvironment(int(envInt("TESSEL_FUZZ_TARGET_CASES", TESSEL_FUZZ_DEFAULT_TARGET_CASES)));
    config.target = target::Target::parse(text);
    if (!target::CpuRequirements::of(config.target.cpu).missingOn(host.arch, host.features).empty()) continue;
    std::printf("[ fuzz     ] %s: seed %llu, %d cases\n", text, static_cast<unsigned long long>(config.seed), config.cases);
    std::fflush(stdout);
    fuzz::FuzzReport report = fuzz::runFuzz(config);
    for (auto& failure : report.failures) ADD_FAILURE() << text << ": " << failure;
    EXPECT_EQ(report.failures.size(), 0u) << text << ", seed " << config.seed;
    EXPECT_GT(report.checked, config.cases / 2) << text;
    ++checked;
  }
  EXPECT_EQ(checked, host.has("avx2") ? 2 : 1);
}
