// `tessel tune` as a user runs it: a bad tuner name fails before any work, a small run logs
// every trial and builds the network with the best, and a run killed with SIGKILL and
// restarted with --resume finishes its budget keeping every logged trial, measuring none twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <thread>

#include "codegen/Toolchain.h"
#include "target/HostCpu.h"
#include "runtime/TimeEvaluator.h"
#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "tune/RecordLog.h"
#include "tune/ShippedRecords.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::testsupport;

namespace {

std::vector<std::string> lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Task 2 of resnet-18 (NHWC after the passes) is a 3x3 convolution with thousands of configs.
std::vector<std::string> tuneCommand(const std::string& log, const std::string& trials) {
  return {tesselCli(), "tune", "--model", "resnet-18", "--tasks", "2", "--tuner", "random", "--n-trial", trials,
          "--batch-size", "2", "--number", "1", "--repeat", "1", "--cooldown-interval", "0", "--log", log, "--no-evaluate"};
}

/// Runs tuneCommand on the given tasks (two trials each) with extra options, within 3 minutes.
SubprocessResult tuneTasks(const std::string& log, const std::string& tasks, const std::vector<std::string>& extra = {}) {
  auto argv = tuneCommand(log, "2");
  argv[5] = tasks;
  argv.insert(argv.end(), extra.begin(), extra.end());
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  return runSubprocess(argv, limit);
}

TEST(TuneCli, AnUnknownTunerFailsBeforeAnyWork) {
  TempDir dir;
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--tuner", "bayes", "--log", dir.path() + "/x.log"});
  EXPECT_NE(r.exitCode, 0);
  expectContains(r.output, "Invalid tuner: bayes");
  EXPECT_EQ(r.output.find("Extract tasks"), std::string::npos) << r.output;
}

TEST(TuneCli, AKilledRunResumesKeepingEveryLoggedTrial) {
  TempDir dir;
  std::string log = dir.path() + "/tune.log";
  auto argv = tuneCommand(log, "12");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    // A killed tessel cannot remove its temporary folders: they go into the test's own.
    setenv("TMPDIR", dir.path().c_str(), 1);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  // Kill it once a few trials are in the log (or give up after a minute).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (lines(log).size() < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  auto before = tune::readRecords(log);
  ASSERT_GE(before.records.size(), 4u);
  ASSERT_LT(before.records.size(), 12u) << "the run finished before it was killed";

  // A record whose config is not in today's space (a knob value it does not offer): left out of
  // the resumed trials, and the run says so.
  tune::TuningRecord foreign = before.records[0];
  foreign.config->entity[0][2] = "not an option";
  {
    tune::RecordLogWriter writer(log);
    writer.append(foreign);
  }

  auto argvResume = tuneCommand(log, "12");
  argvResume.push_back("--resume");
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(120000);
  auto resumed = runSubprocess(argvResume, limit);
  ASSERT_TRUE(resumed.ok()) << resumed.describe() << "\n" << resumed.output;
  expectContains(resumed.output, "Resuming from");
  expectContains(resumed.output, fmt::format("--resume: 1 of {} records left out, their configs are not in today's spaces: a value of '{}' "
                                             "is not among its options (1)",
                                             before.records.size() + 1, foreign.config->entity[0][0].get<std::string>()));
  expectContains(resumed.output, "Progress: (12/12)");
  expectContains(resumed.output, "Compile...");

  auto after = tune::readRecords(log);
  // Twelve trials and the foreign record, then the confirmation's decision (one record, a config
  // measured before).
  ASSERT_EQ(after.records.size(), 14u) << after.report.describeSkipped();
  after.records.erase(after.records.begin() + int64_t(before.records.size()));
  EXPECT_TRUE(after.records.back().result.confirmed);
  after.records.pop_back();
  std::set<int64_t> configs;
  for (size_t i = 0; i < after.records.size(); ++i) {
    ASSERT_TRUE(after.records[i].config.has_value());
    EXPECT_FALSE(after.records[i].result.confirmed);
    configs.insert(after.records[i].config->index);
    if (i < before.records.size()) {
      EXPECT_EQ(tune::recordToLine(after.records[i]), tune::recordToLine(before.records[i])) << "record " << i << " changed";
    }
  }
  EXPECT_EQ(configs.size(), 12u) << "a config was measured twice";
}

// With --task-scheduler, template tuning's --n-trial is the network's budget, spread over the
// tasks in rounds (round-robin here: the same number each), with the seed's table after each
// round, one confirmation per task at the end, and a resumed run adding to it without repeats.
TEST(TuneCli, TheTaskSchedulerSpreadsTheNetworksBudgetOverTemplateTasks) {
  TempDir dir;
  std::string log = dir.path() + "/rr.log";
  auto argv = tuneCommand(log, "8");
  argv[5] = "2,3";
  argv.insert(argv.end(), {"--task-scheduler", "round-robin"});
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  auto r = runSubprocess(argv, limit);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "[ Task Scheduler ]");
  expectContains(r.output, "Estimated total latency: ");
  auto countTrials = [&] {
    std::map<std::string, std::set<int64_t>> configs;
    size_t trials = 0, decisions = 0;
    for (const auto& rec : tune::readRecords(log).records) {
      EXPECT_TRUE(rec.task.fromTemplate());
      if (rec.result.confirmed) {
        ++decisions;
        continue;
      }
      ++trials;
      EXPECT_TRUE(configs[rec.task.workloadKey].insert(rec.config->index).second) << "config measured twice in " << rec.task.name;
    }
    return std::make_tuple(trials, decisions, configs);
  };
  auto [trials, decisions, configs] = countTrials();
  EXPECT_EQ(trials, 8u);
  ASSERT_EQ(configs.size(), 2u);
  for (const auto& [name, measured] : configs) EXPECT_EQ(measured.size(), 4u) << name;
  EXPECT_EQ(decisions, 2u);

  argv.push_back("--resume");
  argv[9] = "12";  // --n-trial
  r = runSubprocess(argv, limit);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  auto [moreTrials, moreDecisions, moreConfigs] = countTrials();
  EXPECT_EQ(moreTrials, 12u);  // the logged 8 count: the round of the 4 left goes to one task
  EXPECT_EQ(moreDecisions, 3u);  // and only that task is confirmed again
  size_t distinct = 0;
  for (const auto& [key, measured] : moreConfigs) distinct += measured.size();
  EXPECT_EQ(distinct, 12u);
}

TEST(TuneCli, ColdCacheSaysWhichTasksAreMeasuredCold) {
  TempDir dir;
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(120000);
  auto always = tuneCommand(dir.path() + "/always.log", "2");
  always.insert(always.end(), {"--cold-cache", "always"});
  auto r = runSubprocess(always, limit);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, ")  measured cold");  // after "N configs (of M)"
  EXPECT_EQ(tune::readRecords(dir.path() + "/always.log").records.size(), 3u);  // two trials and the decision

  auto never = tuneCommand(dir.path() + "/never.log", "2");
  never.insert(never.end(), {"--cold-cache", "never"});
  r = runSubprocess(never, limit);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  EXPECT_EQ(r.output.find("measured cold"), std::string::npos) << r.output;

  auto bad = tuneCommand(dir.path() + "/bad.log", "2");
  bad.insert(bad.end(), {"--cold-cache", "sometimes"});
  r = runSubprocess(bad, limit);
  EXPECT_NE(r.exitCode, 0);
  expectContains(r.output, "--cold-cache: sometimes not in {auto,always,never}");
  EXPECT_EQ(r.exitCode, 2);  // a usage error
}

// Under --winograd auto a Winograd layer is tuned both ways, and a build with the records
// takes the faster variant: here the records are edited to make Winograd slow.
TEST(TuneCli, RecordsChooseBetweenWinogradAndTheDirectConvolution) {
  TempDir dir;
  std::string log = dir.path() + "/both.log";
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  auto r = tuneTasks(log, "2,3");  // layer1_0_1_relu as Winograd, then direct (with packed weights)
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "layer1_0_1_relu              conv2d_nhwc_winograd.x86");
  expectContains(r.output, "layer1_0_1_relu              conv2d_nhwc_packed.x86");
  expectContains(r.output, "measured both ways: ");
  auto read = tune::readRecords(log);
  ASSERT_FALSE(read.records.empty());
  std::ofstream slowWinograd(dir.path() + "/slow.log");
  int edited = 0;
  for (auto record : read.records) {
    if (record.task.templateName == "conv2d_nhwc_winograd.x86" && record.ok()) {
      for (double& c : record.result.costs) c = 1.0;  // a second per call
      ++edited;
    }
    slowWinograd << tune::recordToLine(record) << "\n";
  }
  slowWinograd.close();
  ASSERT_GT(edited, 0);
  auto compiled = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--records", dir.path() + "/slow.log",
                                 "--no-shipped-records", "-o", dir.path() + "/module"},
                                limit);
  ASSERT_TRUE(compiled.ok()) << compiled.describe() << "\n" << compiled.output;
  expectContains(compiled.output, "measured both ways: 0 faster as Winograd, 2 faster direct; by the rules: 8");
  expectContains(compiled.output, "Winograd for 8 of 13 stride-1 3x3 convolutions");
  expectContains(compiled.output, "default schedules: the rules applied to all");
  // Where F(6x6)'s transformed weight fits the L2 (layer1's: 1 MiB), the layer is also tuned as
  // F(6x6), listed after its direct task; its record, made the fastest here, wins over both.
  if (target::hostCpu().l2Bytes >= (int64_t(1) << 20)) {
    std::string sixLog = dir.path() + "/six.log";
    auto six = tuneTasks(sixLog, "4");
    ASSERT_TRUE(six.ok()) << six.describe() << "\n" << six.output;
    expectContains(six.output, "layer1_0_1_relu              conv2d_nhwc_winograd.x86");
    std::ofstream fastSix(dir.path() + "/six_fastest.log");
    for (auto record : tune::readRecords(sixLog).records) {
      ASSERT_EQ(record.task.templateName, "conv2d_nhwc_winograd.x86");
      if (record.ok())
        for (double& c : record.result.costs) c = 1e-6;
      fastSix << tune::recordToLine(record) << "\n";
    }
    for (const auto& record : tune::readRecords(dir.path() + "/slow.log").records) fastSix << tune::recordToLine(record) << "\n";
    fastSix.close();
    auto withSix = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--records", dir.path() + "/six_fastest.log",
                                  "--no-shipped-records", "-o", dir.path() + "/module6"},
                                 limit);
    ASSERT_TRUE(withSix.ok()) << withSix.describe() << "\n" << withSix.output;
    // (Two layers share that workload: F(6x6) for both.)
    expectContains(withSix.output, "Winograd for 10 of 13 stride-1 3x3 convolutions (F(6x6): 2, F(4x4): 2, F(2x2): 6); measured "
                                   "both ways: 2 faster as Winograd, 0 faster direct; by the rules: 8");
  }
}

// Issue 39, defect 13: a run that tuned only a Winograd layer's direct variant built the rules'
// Winograd form and said "applied tuned records to 0 of 21 workloads ... (no record)". The
// layer takes the variant it has a record of, at the end of the run and in compile --records.
TEST(TuneCli, ARecordOfTheDirectVariantAloneIsUsed) {
  TempDir dir;
  std::string log = dir.path() + "/direct.log";
  auto r = tuneTasks(log, "3", {"--confirm-top", "0"});  // layer1_0_1_relu, direct (packed weights)
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "   3  layer1_0_1_relu              conv2d_nhwc_packed.x86");
  // Two layers share that workload: both direct now.
  const std::string used = "applied tuned records to 1 of 21 workloads", direct = "measured one way: 0 as Winograd, 2 direct";
  expectContains(r.output, used);
  expectContains(r.output, direct);
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  auto compiled = runSubprocess(
      {tesselCli(), "compile", "--model", "resnet-18", "--records", log, "--no-shipped-records", "-o", dir.path() + "/module"}, limit);
  ASSERT_TRUE(compiled.ok()) << compiled.describe() << "\n" << compiled.output;
  expectContains(compiled.output, used);
  expectContains(compiled.output, direct);
}

// The build's Winograd option without records (a test of its own: the tuning above is long).
TEST(TuneCli, CompileTakesEveryWinogradChoice) {
  TempDir dir;
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  // Kernels at -O0 (-opt-level=0): the choice of forms is checked, not the code (two builds of
  // resnet-18 at -O2 spent 16 CPU-s in the compiler).
  const std::string target = "cpu -opt-level=0";
  // --winograd never: no Winograd layer, nothing to choose.
  auto never = runSubprocess(
      {tesselCli(), "compile", "--model", "resnet-18", "--target", target, "--winograd", "never", "-o", dir.path() + "/direct"}, limit);
  ASSERT_TRUE(never.ok()) << never.describe() << "\n" << never.output;
  expectContains(never.output, "Winograd for 0 of 13 stride-1 3x3 convolutions");
  // --winograd 6: every candidate as F(6x6, 3x3).
  auto six = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", target, "--image-size", "64", "--winograd", "6",
                            "--no-shipped-records", "-o", dir.path() + "/six"},
                           limit);
  ASSERT_TRUE(six.ok()) << six.describe() << "\n" << six.output;
  expectContains(six.output, "Winograd for 13 of 13 stride-1 3x3 convolutions (F(6x6): 13, F(4x4): 0, F(2x2): 0)");
  auto bad = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--winograd", "3", "-o", dir.path() + "/bad"}, limit);
  EXPECT_EQ(bad.exitCode, 2);
  expectContains(bad.output, "--winograd: 3 not in {auto,never,2,4,6}");
}

// A log tuned before weights were packed still applies: those layers keep HWIO weights.
TEST(TuneCli, RecordsTunedWithoutPackingKeepTheirLayersUnpacked) {
  TempDir dir;
  std::string log = dir.path() + "/hwio.log";
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  auto r = tuneTasks(log, "1", {"--pack-weights", "never"});  // conv1, direct
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "conv1_relu                   conv2d_nhwc.x86");
  auto compiled = runSubprocess(
      {tesselCli(), "compile", "--model", "resnet-18", "--records", log, "--no-shipped-records", "-o", dir.path() + "/module"}, limit);
  ASSERT_TRUE(compiled.ok()) << compiled.describe() << "\n" << compiled.output;
  expectContains(compiled.output, "applied tuned records to 1 of 21 workloads");
  expectContains(compiled.output, "HWIO weights kept for 1 layer whose records were tuned without packing");
}

// Without records of the user's, tessel compile takes the records shipped for this machine's class
// of CPU, and every tunable kernel of resnet-18 finds one: a change of the graph passes or the
// operators that leaves them behind fails here (scripts/tune-shipped-records.sh makes new ones).
// A log of the user's covers its workloads first; --no-shipped-records builds the defaults.
TEST(TuneCli, CompileUsesTheShippedRecordsOfThisCpuClass) {
  TempDir dir;
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  auto compile = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> argv = {tesselCli(), "compile", "--model", "resnet-18", "-o", dir.path() + "/" + out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = runSubprocess(argv, limit);
    EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
    return r.output;
  };
  std::string cls = target::hostCpu().recordFamily();
  std::string shipped = compile("shipped", {});
  auto sets = tune::shippedRecordSets();
  if (std::find(sets.begin(), sets.end(), "cpu/" + cls) == sets.end()) {
    expectContains(shipped, "no shipped records for cpu (cpu/" + cls + "): tessel ships records for cpu/x86_64-avx2, cpu/x86_64-avx2-zen, "
                            "cpu/x86_64-avx512");
    GTEST_SKIP() << "tessel ships no CPU records for this machine's record family (" << cls << ")";
  }
  if (shipped.find("not used: they were measured on a 2-core") != std::string::npos)
    GTEST_SKIP() << "the shipped records were measured on 2 cores and this machine has " << target::hostCpu().cores;
  const std::string using_ = "using shipped records for cpu (cpu/" + cls + "): ";
  expectContains(shipped, using_ + "16 of 21 kernels\n");
  EXPECT_EQ(shipped.find("warning"), std::string::npos) << shipped;
  // 16 = the 16 convolution and dense workloads; the others (pooling, softmax, ...) have no template.
  expectContains(shipped, "measured both ways:");

  std::string none = compile("none", {"--no-shipped-records"});
  EXPECT_EQ(none.find("shipped"), std::string::npos) << none;

  std::string log = dir.path() + "/mine.log";
  auto r = tuneTasks(log, "1");
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  std::string mine = compile("mine", {"--records", log});
  expectContains(mine, "applied tuned records to 16 of 21 workloads (15 shipped with tessel)");
  expectContains(mine, using_ + "15 of 21 kernels\n");
}

// Shipped records serve targets of their class and of the core count they were measured on
// (their parallel loops are divided for it); a record applied to another machine is pointed
// out. Compiled for named CPUs, so it runs on any x86 host (nothing here is run).
TEST(TuneCli, ShippedRecordsServeTheirClassAndCoreCount) {
  if (target::hostArch() != "x86_64") GTEST_SKIP() << "compiles for x86 CPUs";
  TempDir dir;
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(180000);
  // Kernels at -O0 (-opt-level=0): what is checked is which records a build takes, not its code;
  // four builds of resnet-18 at -O2 spent 20 CPU-s in the compiler.
  auto compile = [&](const std::string& target, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {tesselCli(), "compile", "--model", "resnet-18", "--target", target, "-o", dir.path() + "/m"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = runSubprocess(argv, limit);
    EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
    return r.output;
  };
  expectContains(compile("cpu -mcpu=skylake-avx512 -num-cores=2 -opt-level=0"),
                 "using shipped records for cpu -mcpu=skylake-avx512 -num-cores=2 -opt-level=0 (cpu/x86_64-avx512): 16 of 21 kernels\n");
  std::string sixteen = compile("cpu -mcpu=skylake-avx512 -num-cores=16 -opt-level=0");
  expectContains(sixteen, "shipped records for cpu -mcpu=skylake-avx512 -num-cores=16 -opt-level=0 (cpu/x86_64-avx512) not used: they were "
                          "measured on a 2-core AMD EPYC (Zen 5) and this target has 16 cores");
  EXPECT_EQ(sixteen.find("using shipped"), std::string::npos) << sixteen;
  expectContains(compile("cpu -mcpu=haswell -num-cores=2 -opt-level=0"),
                 "using shipped records for cpu -mcpu=haswell -num-cores=2 -opt-level=0 (cpu/x86_64-avx2): 16 of 21 kernels\n");
  // The AVX-512 log given as the user's records for an AVX2 target: applied where a kernel is the
  // same (most are not: AVX2's weights are packed by other blocks), and said to be foreign.
  std::string foreign = compile("cpu -mcpu=haswell -num-cores=2 -opt-level=0",
                                {"--records", std::string(TESSEL_SOURCE_DIR) + "/records/cpu/x86_64-avx512.log"});
  expectContains(foreign, "kernels took records measured on x86_64-avx512 with 2 cores (AMD EPYC (Zen 5)), not on this target's "
                          "x86_64-avx2 with 2 cores: their schedules are shaped for that machine");
  expectContains(foreign, "compiled resnet-18 for x86_64-avx2 (haswell): 32-byte vectors x 16 registers");
  // A Zen tuning's AVX2 tiles are another record family (CpuMachine::recordFamily), with a log of
  // its own; the haswell log's records given as the user's are said to be shaped for another
  // machine.
  expectContains(compile("cpu -mcpu=znver3 -num-cores=2 -opt-level=0"),
                 "using shipped records for cpu -mcpu=znver3 -num-cores=2 -opt-level=0 (cpu/x86_64-avx2-zen): 16 of 21 kernels\n");
  std::string haswellOnZen = compile("cpu -mcpu=znver3 -num-cores=2 -opt-level=0",
                                     {"--no-shipped-records", "--records", std::string(TESSEL_SOURCE_DIR) + "/records/cpu/x86_64-avx2.log"});
  expectContains(haswellOnZen, "kernels took records measured on x86_64-avx2 with 2 cores (haswell), not on this target's "
                               "x86_64-avx2-zen with 2 cores");
}

}  // namespace

