// The RPC runner against a real tracker and real device servers on loopback: a batch spreads
// over every free device (and finishes sooner than on one), a crashing candidate kills only
// the server's worker, a server killed with SIGKILL mid-run and a tracker killed and restarted
// mid-run lose no candidate, correctness checking works remotely, and a key nobody serves or a
// wrong token ends every candidate in one clear error.
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <thread>

#include "RpcTestSupport.h"
#include "common/ErrorText.h"
#include "common/FakeWorker.h"
#include "ops/Examples.h"
#include "rpc/HardwareInfo.h"
#include "rpc/RpcRunner.h"
#include "rpc/TrackerClient.h"
#include "tune/RecordQueries.h"
#include "tune/TuneTestSupport.h"

using namespace tessel;
using namespace tessel::rpc;
using namespace tessel::rpctest;
using namespace std::chrono_literals;
using testsupport::expectContains;

namespace {

/// tunetest::faultySource, and "sleepy": a kernel that sleeps 20 ms per call, as a slow board
/// would take its time without using this machine's two cores (which CPU-bound measurements
/// on three local servers would have to share).
std::string testSource(const tune::MeasureInput& input, const std::string& kernelName) {
  std::string source = tunetest::faultySource(input, kernelName);
  if (input.config != "sleepy") return source;
  const std::string end = "  return 0;\n}";
  auto at = source.rfind(end);
  TESSEL_CHECK(at != std::string::npos, "test: no kernel end found in the generated source");
  source.insert(at, "  usleep(20000);\n");
  return "#include <unistd.h>\n" + source;
}

/// Built candidates of a task (the small matmul unless given), by config ("" = the default,
/// "segfault", "wrong", "sleepy"), built once per process.
const std::pair<tune::MeasureInput, tune::BuildResult>& built(const std::string& config,
                                                              const tune::MeasureTaskPtr& task = tunetest::smallMatmul()) {
  static std::map<std::string, std::pair<tune::MeasureInput, tune::BuildResult>> cache;
  static std::unique_ptr<tune::LocalBuilder> builder;
  std::string key = task->key() + " " + config;
  if (!cache.count(key)) {
    if (!builder) {
      tune::LocalBuilderOptions o;
      o.sourceGenerator = testSource;
      builder = std::make_unique<tune::LocalBuilder>(o);
    }
    auto input = tunetest::candidate(task, config);
    auto result = builder->build({input});
    TESSEL_CHECK(result[0].ok(), "test: build of '{}' failed: {}", config, result[0].errorMessage);
    cache[key] = {input, result[0]};
  }
  return cache[key];
}

struct Batch {
  std::vector<tune::MeasureInput> inputs;
  std::vector<tune::BuildResult> builds;
};

Batch batchOf(const std::vector<std::string>& configs) {
  Batch b;
  for (const auto& c : configs) {
    b.inputs.push_back(built(c).first);
    b.builds.push_back(built(c).second);
  }
  return b;
}

Batch defaultBatch(size_t n) { return batchOf(std::vector<std::string>(n, "")); }

RpcRunnerOptions runnerOptions(const Cluster& c, const std::string& key, double minRepeatMs) {
  RpcRunnerOptions o;
  o.tracker = c.trackerAddress();
  o.key = key;
  o.security = RpcSecurity::withToken(c.token);
  o.deviceWaitSeconds = 30;
  o.measure.number = 1;
  o.measure.repeat = 2;
  o.measure.minRepeatMs = minRepeatMs;
  o.measure.cooldownIntervalSeconds = 0;
  o.measure.timeoutSeconds = 5;
  return o;
}

void expectAllOk(const std::vector<tune::MeasureResult>& results, size_t n) {
  ASSERT_EQ(results.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(results[i].ok()) << i << ": " << results[i].errorMessage;
    EXPECT_FALSE(results[i].costs.empty()) << i;
  }
}

double secondsOf(const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Waits until `n` devices of `key` are leased (a run is measuring on them).
bool waitForLeased(const Cluster& c, const std::string& key, int n) {
  TrackerClient client(c.trackerAddress(), RpcSecurity::withToken(c.token));
  for (int i = 0; i < 1000; ++i) {
    try {
      for (const auto& k : client.summary(nullptr, 2s))
        if (k.key == key && k.total - k.free >= n) return true;
    } catch (const Error&) {
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST(RpcRunner, SpreadsABatchOverEveryFreeDeviceAndFinishesSooner) {
  Cluster c;
  c.startTracker();
  for (int i = 0; i < 3; ++i) c.startServer("spread");
  ASSERT_TRUE(c.waitForDevices("spread", 3, 3));
  // Each candidate sleeps 2 x 20 ms on its device.
  auto batch = batchOf(std::vector<std::string>(12, "sleepy"));
  auto options = runnerOptions(c, "spread", 0);
  options.measure.repeat = 2;
  RpcRunner all(options);
  expectAllOk(all.run(batch.inputs, batch.builds), 12);  // every server starts its worker
  std::vector<tune::MeasureResult> results;
  double allSeconds = secondsOf([&] { results = all.run(batch.inputs, batch.builds); });
  expectAllOk(results, 12);
  auto perDevice = all.measuredPerDevice();
  EXPECT_EQ(perDevice.size(), 3u) << "every server gets work";
  int64_t total = 0;
  for (auto& [address, n] : perDevice) {
    EXPECT_GE(n, 2) << address;
    total += n;
  }
  EXPECT_EQ(total, 24);

  options.maxDevices = 1;
  RpcRunner one(options);
  double oneSeconds = secondsOf([&] { results = one.run(batch.inputs, batch.builds); });
  expectAllOk(results, 12);
  EXPECT_EQ(one.measuredPerDevice().size(), 1u);
  // Generous: three devices at least 1.5x faster than one (ideally 3x).
  EXPECT_LT(allSeconds * 1.5, oneSeconds) << "one device " << oneSeconds << " s, three " << allSeconds << " s";
  std::printf("12 candidates: %.2f s on one device, %.2f s on three\n", oneSeconds, allSeconds);
  ASSERT_TRUE(c.waitForDevices("spread", 3, 3)) << "every device is free again after the run";
}

TEST(RpcRunner, ACrashingCandidateKillsOnlyTheServersWorker) {
  Cluster c;
  c.startTracker();
  c.startServer("crash");
  auto batch = batchOf({"", "segfault", ""});
  RpcRunner runner(runnerOptions(c, "crash", 0));
  auto results = runner.run(batch.inputs, batch.builds);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok()) << results[0].errorMessage;
  EXPECT_EQ(results[1].errorNo, tune::MeasureErrorNo::RuntimeDeviceError);
  expectContains(results[1].errorMessage, "killed by signal 11");
  expectContains(results[1].errorMessage, "on 127.0.0.1:");
  EXPECT_TRUE(results[2].ok()) << results[2].errorMessage;
  EXPECT_TRUE(c.server(0).running());
}

TEST(RpcRunner, TheStopBoundTravelsToTheDevice) {
  Cluster c;
  c.startTracker();
  c.startServer("stop");
  auto batch = batchOf({"", ""});
  batch.inputs[0].stopAboveSeconds = 1e-9;  // any kernel's warm-up is slower: one timed call
  RpcRunner runner(runnerOptions(c, "stop", 0));
  auto results = runner.run(batch.inputs, batch.builds);
  expectAllOk(results, 2);
  EXPECT_EQ(results[0].costs.size(), 1u);
  EXPECT_EQ(results[1].costs.size(), 2u);  // repeat 2, no bound
}

TEST(RpcRunner, ChecksCorrectnessOnTheDevice) {
  Cluster c;
  c.startTracker();
  c.startServer("check");
  auto options = runnerOptions(c, "check", 0);
  options.measure.checkCorrectness = true;
  RpcRunner runner(options);
  tune::LocalBuilderOptions bo;
  bo.sourceGenerator = tunetest::faultySource;
  tune::LocalBuilder builder(bo);
  auto task = tunetest::smallMatmul();
  auto results = tune::measureBatch(builder, runner, {tunetest::candidate(task, ""), tunetest::candidate(task, "wrong")});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok()) << results[0].errorMessage;
  EXPECT_EQ(results[1].errorNo, tune::MeasureErrorNo::WrongAnswerError) << results[1].errorMessage;
}

TEST(RpcRunner, AServerKilledMidRunLosesNoCandidate) {
  Cluster c;
  c.startTracker();
  for (int i = 0; i < 3; ++i) c.startServer("kill");
  ASSERT_TRUE(c.waitForDevices("kill", 3, 3));
  auto batch = batchOf(std::vector<std::string>(12, "sleepy"));
  auto options = runnerOptions(c, "kill", 0);
  options.measure.repeat = 5;  // 100 ms a candidate
  RpcRunner runner(options);
  auto run = std::async(std::launch::async, [&] { return runner.run(batch.inputs, batch.builds); });
  ASSERT_TRUE(waitForLeased(c, "kill", 3));
  std::this_thread::sleep_for(150ms);  // in the middle of a measurement
  c.server(0).signal(SIGKILL);
  auto results = run.get();
  expectAllOk(results, 12);
  EXPECT_GE(runner.devicesLost(), 1);
  int64_t total = 0;
  for (auto& [address, n] : runner.measuredPerDevice()) total += n;
  EXPECT_EQ(total, 12) << "each candidate measured once to completion";
  ASSERT_TRUE(c.waitForDevices("kill", 2)) << "the tracker drops the dead server";
}

TEST(RpcRunner, ATrackerRestartMidRunIsSurvived) {
  Cluster c;
  c.startTracker();
  for (int i = 0; i < 3; ++i) c.startServer("restart");
  ASSERT_TRUE(c.waitForDevices("restart", 3, 3));
  int port = c.trackerPort();
  auto options = runnerOptions(c, "restart", 0);
  options.measure.repeat = 3;  // 60 ms a candidate
  options.maxDevices = 2;
  RpcRunner runner(options);
  auto batch = batchOf(std::vector<std::string>(10, "sleepy"));
  auto run = std::async(std::launch::async, [&] { return runner.run(batch.inputs, batch.builds); });
  ASSERT_TRUE(waitForLeased(c, "restart", 2));
  c.tracker().signal(SIGKILL);
  c.tracker().wait();
  std::this_thread::sleep_for(300ms);
  c.startTracker(port);
  expectAllOk(run.get(), 10);
  // The servers registered again by themselves, and the next batch goes through the new tracker.
  ASSERT_TRUE(c.waitForDevices("restart", 3, 3));
  for (int i = 0; i < 3; ++i) expectContains(c.server(i).output(), "registered again");
  expectAllOk(runner.run(batch.inputs, batch.builds), 10);

  // A run that starts while the tracker is down waits for it.
  c.tracker().signal(SIGKILL);
  c.tracker().wait();
  auto waiting = std::async(std::launch::async, [&] { return runner.run(batch.inputs, batch.builds); });
  std::this_thread::sleep_for(500ms);
  c.startTracker(port);
  expectAllOk(waiting.get(), 10);
}

TEST(RpcRunner, ARogueServersInventedTimingsAreErrorsAndNeverTheBest) {
  // A `tessel server --worker fake.sh` registered under the key of an honest server answers
  // every candidate at ten times what this machine can do at all (once, 806,400 GFLOPS on two
  // cores became a task's best record).
  auto task = tune::makeMeasureTask("matmul", ops::matmul(64, 64, 64));
  double peak = queryHostHardware().peakGflops;
  ASSERT_GT(peak, 0);
  double invented = std::max(task->dag.flopCount() / (peak * 1e9) / 10, 1.5e-9);  // over the floor
  Cluster c;
  c.startTracker();
  c.startServer("victim");
  TempDir rogueDir;
  size_t rogue = c.startServer("victim", {"--worker", testsupport::writeFakeWorker(rogueDir.path(), fmt::format("{}, {}", invented, invented))});
  ASSERT_TRUE(c.waitForDevices("victim", 2, 2));
  std::string rogueAddress = fmt::format("127.0.0.1:{}", c.serverPort(rogue));
  Batch batch;
  for (int i = 0; i < 12; ++i) {
    batch.inputs.push_back(built("", task).first);
    batch.builds.push_back(built("", task).second);
  }
  RpcRunner runner(runnerOptions(c, "victim", 0));
  auto results = runner.run(batch.inputs, batch.builds);
  ASSERT_EQ(runner.measuredPerDevice().size(), 2u) << "both servers get work";
  int refused = 0;
  std::vector<tune::TuningRecord> records;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.ok()) {
      ++refused;
      EXPECT_EQ(r.errorNo, tune::MeasureErrorNo::RuntimeDeviceError);
      expectContains(r.errorMessage, "on " + rogueAddress + ": implausible timing from the device server: a cost of");
    } else {
      EXPECT_GT(r.cost(), invented * 10) << "an honest measurement";
    }
    records.push_back(tune::makeRecord(batch.inputs[i], r));
  }
  EXPECT_EQ(refused, runner.measuredPerDevice().at(rogueAddress)) << "every answer of the rogue is refused";
  auto best = tune::bestRecords(records);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_TRUE(best[0].ok());
  EXPECT_GT(best[0].cost(), invented * 10);
}

TEST(RpcRunner, NoDeviceOfTheKeyEndsEveryCandidateInOneError) {
  Cluster c;
  c.startTracker();
  c.startServer("somebody");
  auto options = runnerOptions(c, "nobody", 0);
  options.deviceWaitSeconds = 0.5;
  RpcRunner runner(options);
  auto batch = defaultBatch(3);
  auto results = runner.run(batch.inputs, batch.builds);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    EXPECT_EQ(r.errorNo, tune::MeasureErrorNo::RunTimeoutError);
    expectContains(r.errorMessage, "no device of key 'nobody'");
  }
  // Asked before any work, the runner says which keys the tracker does have.
  auto message = testsupport::errorOf([&] { runner.checkDevicesRegistered(); });
  expectContains(message, "no device of key 'nobody' is registered with the tracker at");
  expectContains(message, "(it has somebody (1))");
  auto ok = options;
  ok.key = "somebody";
  RpcRunner(ok).checkDevicesRegistered();
}

TEST(RpcRunner, AWrongTokenEndsEveryCandidateInOneClearError) {
  Cluster c;
  c.token = "right";
  c.startTracker();
  c.startServer("tok");
  auto options = runnerOptions(c, "tok", 0);
  options.security = RpcSecurity::withToken("wrong");
  RpcRunner runner(options);
  auto batch = defaultBatch(2);
  auto results = runner.run(batch.inputs, batch.builds);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    EXPECT_EQ(r.errorNo, tune::MeasureErrorNo::UnknownError);
    expectContains(r.errorMessage, "wrong token");
  }
}

TEST(RpcRunner, InvalidOptionsFailBeforeAnyWork) {
  RpcRunnerOptions o;
  expectContains(testsupport::errorOf([&] { RpcRunner r(o); }), "a device key is required");
  o.key = "k";
  o.tracker = "nohost";
  expectContains(testsupport::errorOf([&] { RpcRunner r(o); }), "the tracker must be HOST:PORT");
  o.tracker = "127.0.0.1:9190";
  o.maxAttempts = 0;
  expectContains(testsupport::errorOf([&] { RpcRunner r(o); }), "max attempts must be at least 1");
}
