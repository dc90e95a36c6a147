// bench_rpc: what measuring through the tracker costs and gains, from one run.
//  - throughput: candidates per second through a tracker with 1 and 3 device servers (in this
//    process, over loopback gRPC, each with its own measurement worker process), for a tiny
//    kernel (the RPC overhead dominates) and a kernel that sleeps 20 ms per call (a slow board:
//    the device time dominates and spreading pays);
//  - overhead: the mean wall time of one measurement through the RPC runner against the local
//    runner, same kernel, same options.
// Prints `BENCH <name> <value> <unit>` lines. BENCH_RPC_CANDIDATES sets the batch size (default 48).
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>

#include "ops/Examples.h"
#include "rpc/DeviceServer.h"
#include "rpc/RpcRunner.h"
#include "rpc/Tracker.h"
#include "rpc/TrackerClient.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"

using namespace tessel;

namespace {

std::string sleepySource(const tune::MeasureInput& input, const std::string& kernelName) {
  std::string source = tune::LocalBuilder::generateSource(input, kernelName);
  if (input.config != "sleepy") return source;
  auto at = source.rfind("  return 0;\n}");
  source.insert(at, "  usleep(20000);\n");
  return "#include <unistd.h>\n" + source;
}

double secondsOf(const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void report(const std::string& name, double value, const std::string& unit) {
  fmt::print("BENCH {} {:.3f} {}\n", name, value, unit);
  std::fflush(stdout);
}

}  // namespace

int main() {
  size_t count = 48;
  if (const char* env = std::getenv("BENCH_RPC_CANDIDATES")) count = size_t(std::max(3, std::atoi(env)));
  auto task = tune::makeMeasureTask("matmul", ops::matmul(32, 32, 32));
  tune::LocalBuilderOptions bo;
  bo.sourceGenerator = sleepySource;
  tune::LocalBuilder builder(bo);
  auto built = builder.build({tune::MeasureInput{task, {}, "tiny"}, tune::MeasureInput{task, {}, "sleepy"}});
  for (auto& b : built)
    if (!b.ok()) {
      fmt::print(stderr, "bench_rpc: build failed: {}\n", b.errorMessage);
      return 1;
    }

  tune::LocalRunnerOptions measure;
  measure.number = 1;
  measure.repeat = 1;
  measure.minRepeatMs = 0;
  measure.cooldownIntervalSeconds = 0;

  rpc::TrackerOptions to;
  to.host = "127.0.0.1";
  to.port = 0;
  rpc::TrackerServer tracker(to);
  // Three servers; the one-server figures use one of them (--max-devices 1).
  std::vector<std::unique_ptr<rpc::DeviceServer>> servers;
  for (int i = 0; i < 3; ++i) {
    rpc::DeviceServerOptions so;
    so.tracker = fmt::format("127.0.0.1:{}", tracker.port());
    so.key = "bench";
    so.host = "127.0.0.1";
    so.port = 0;
    servers.push_back(std::make_unique<rpc::DeviceServer>(so));
  }
  rpc::TrackerClient client(fmt::format("127.0.0.1:{}", tracker.port()), {});
  for (int i = 0; i < 500; ++i) {
    auto keys = client.summary();
    if (!keys.empty() && keys[0].free == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  for (int kind = 0; kind < 2; ++kind) {
    std::string name = kind == 0 ? "tiny" : "sleepy20ms";
    std::vector<tune::MeasureInput> inputs(count, tune::MeasureInput{task, {}, name});
    std::vector<tune::BuildResult> builds(count, built[kind]);
    // Local: the same worker, no network.
    tune::LocalRunner local(measure);
    local.run({inputs[0]}, {builds[0]});  // starts the worker
    double localSeconds = secondsOf([&] { local.run(inputs, builds); });
    report(fmt::format("rpc.{}.local_candidates_per_s", name), double(count) / localSeconds, "cand/s");
    double seconds[4] = {};
    for (int n : {1, 3}) {
      rpc::RpcRunnerOptions ro;
      ro.tracker = fmt::format("127.0.0.1:{}", tracker.port());
      ro.key = "bench";
      ro.maxDevices = n;
      ro.measure = measure;
      rpc::RpcRunner remote(ro);
      remote.run(inputs, builds);  // every server starts its worker
      seconds[n] = secondsOf([&] { remote.run(inputs, builds); });
      report(fmt::format("rpc.{}.servers{}_candidates_per_s", name, n), double(count) / seconds[n], "cand/s");
    }
    report(fmt::format("rpc.{}.speedup_3_vs_1_servers", name), seconds[1] / seconds[3], "x");
    report(fmt::format("rpc.{}.remote_overhead_per_candidate_ms", name), (seconds[1] - localSeconds) / double(count) * 1e3,
           "ms");
  }
  return 0;
}
