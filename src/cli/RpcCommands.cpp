#include "cli/RpcCommands.h"

#include "graph/GpuTargetLimits.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cli/OptionChecks.h"
#include "cli/RpcServices.h"
#include "codegen/Toolchain.h"
#include "rpc/RemoteDevice.h"
#include "rpc/RpcRunner.h"
#include "rpc/TrackerClient.h"
#include "target/Target.h"
#include "vta/VtaMeasurement.h"
#include "support/Error.h"

namespace tessel::cli {

namespace {

struct QueryArgs {
  std::string host = "127.0.0.1";
  int port = 9190;
  bool devices = false;
  std::string hardwareKey;
  double wait = 10;
  SecurityArgs security;
  std::string device;  ///< a device of this machine instead of the tracker
  std::string target;  ///< --device cpu: the CPU target whose machine model to print (default: this machine)
};

/// query --device cuda|opencl[:N] [--hardware NAME]: the device's hardware parameters under
/// TVM's names (seed 001 reads them from its remote device), all of them or the one named.
void queryLocalDevice(const QueryArgs& a) {
  auto parameters = graph::gpuHardwareParameters(runtime::Device::parse(a.device));
  if (a.hardwareKey.empty() || a.hardwareKey == "all") {
    for (const auto& [name, value] : parameters) fmt::print("{:<30}{}\n", name, value);
    return;
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : parameters) {
    if (name == a.hardwareKey) return fmt::print("{}\n", value);
    names.push_back(name);
  }
  fail("--hardware {}: {} has no such parameter (it has: {}, or all)", a.hardwareKey, a.device, fmt::join(names, ", "));
}

/// query --device cpu [--target T]: the machine model schedules are derived from, this
/// machine's or a target's (`cpu -mcpu=haswell`).
void queryCpuModel(const QueryArgs& a) {
  TESSEL_CHECK(a.hardwareKey.empty(), "--hardware names a GPU parameter; --device cpu prints the whole machine model");
  auto t = target::Target::parse(a.target.empty() ? "cpu" : a.target);
  TESSEL_CHECK(t.isCpu(), "--target {}: --device cpu prints a CPU target's machine model", a.target);
  fmt::print("{}", t.cpu.describe());
}

void runQuery(const QueryArgs& a) {
  TESSEL_CHECK(a.target.empty() || a.device == "cpu", "--target goes with --device cpu");
  if (a.device == "cpu") return queryCpuModel(a);
  if (!a.device.empty()) return queryLocalDevice(a);
  std::string address = fmt::format("{}:{}", a.host, a.port);
  if (!a.hardwareKey.empty()) {
    std::string device;
    auto info = rpc::queryRemoteHardware(address, a.hardwareKey, a.security.security(),
                                         std::chrono::milliseconds(int64_t(a.wait * 1000)), &device);
    fmt::print("Hardware of a '{}' device ({})\n  arch           {}\n  cores          {}\n  vector bits    {}\n"
               "  L1 data cache  {} KiB\n  L2 cache       {} KiB\n  L3 cache       {} KiB\n  peak GFLOPS    {}\n"
               "  worker         {}\n",
               a.hardwareKey, device, info.arch, info.cores, info.vectorBits, info.l1CacheBytes >> 10,
               info.l2CacheBytes >> 10, info.l3CacheBytes >> 10,
               info.peakGflops > 0 ? fmt::format("{:.0f} (fp32, an upper bound)", info.peakGflops) : "unknown", info.worker);
    if (!info.gpuDevice.empty()) {
      const passes::GpuLimits& g = info.gpuLimits;
      fmt::print("  GPU            {}\n  max_threads_per_block        {}\n  max_shared_memory_per_block  {}\n  warp_size                    "
                 "{}\n  max_vthread_extent           {}\n  max_block_dims               {}, {}, {}\n  multi_processor_count        {}\n",
                 g.profile, g.maxThreadsPerBlock, g.maxSharedMemoryPerBlock, g.warpSize, g.maxVThreadExtent, g.maxBlockDimensions[0],
                 g.maxBlockDimensions[1], g.maxBlockDimensions[2], g.multiProcessorCount);
    }
    return;
  }
  rpc::TrackerClient client(address, a.security.security());
  std::vector<rpc::DeviceSummary> devices;
  auto keys = client.summary(&devices);
  size_t keyWidth = 13;
  for (const auto& k : keys) keyWidth = std::max(keyWidth, k.key.size() + 2);
  std::string rule(keyWidth + 21, '-');
  if (a.devices) {
    size_t addressWidth = 22;
    for (const auto& d : devices) addressWidth = std::max(addressWidth, d.address.size() + 2);
    std::string deviceRule(addressWidth + keyWidth + 8, '-');
    fmt::print("Tracker address {}\n\nServer List\n{}\n{:<{}}{:<{}}state\n{}\n", address, deviceRule, "server-address",
               addressWidth, "key", keyWidth, deviceRule);
    for (const auto& d : devices) fmt::print("{:<{}}{:<{}}{}\n", d.address, addressWidth, d.key, keyWidth, d.state);
    fmt::print("{}\n\n", deviceRule);
  }
  fmt::print("Queue Status\n{}\n{:<{}}total  free  pending\n{}\n", rule, "key", keyWidth, rule);
  for (const auto& k : keys) fmt::print("{:<{}}{:<7}{:<6}{}\n", k.key, keyWidth, k.total, k.free, k.pending);
  fmt::print("{}\n", rule);
}

}  // namespace

void addRunnerOptions(CLI::App* c, RunnerArgs& a) {
  c->add_option("--runner", a.runner, "where candidates are measured: local (this machine) or rpc (devices behind a tracker)")
      ->check(CLI::IsMember({"local", "rpc"}));
  c->add_option("--key", a.key, "rpc: the device key to measure on");
  c->add_option("--tracker", a.tracker, "rpc: the tracker's HOST:PORT");
  c->add_option("--priority", a.priority, "rpc: priority of the requests for devices (higher first)")->check(integerIn(-1000000, 1000000));
  c->add_option("--device-wait", a.deviceWait, "rpc: seconds to wait for a free device before failing candidates")
      ->check(numberIn(0.0, 86400.0));
  c->add_option("--max-devices", a.maxDevices, "rpc: devices used at once (0: every device of the key)")->check(integerIn(0, 100000));
  c->add_option("--max-attempts", a.maxAttempts, "rpc: measurements of a candidate whose device is lost, in all")
      ->check(integerIn(1, 100));
  c->add_option("--rpc-token", a.token, "rpc: the tracker's and servers' token (default: $TESSEL_RPC_TOKEN)");
  c->add_option("--tls-ca", a.tlsCa, "rpc: connect over TLS, trusting this PEM CA certificate");
  c->add_option("--tls-target-name", a.tlsTargetName, "rpc: host name to check the certificates against");
  // Checked when the command line is read, before any work.
  c->parse_complete_callback([&a] {
    if (a.runner == "rpc" && a.key.empty())
      throw CLI::ValidationError("--runner rpc", "needs --key: the device key to measure on (see `tessel query`)");
    try {
      if (a.runner == "rpc") withDefaultPort(a.tracker, 9190);
    } catch (const Error& e) {
      throw CLI::ValidationError(e.what());
    }
  });
}

/// A tuner's or benchmark's credentials toward the tracker and the devices.
rpc::RpcSecurity clientSecurity(const RunnerArgs& a) {
  rpc::RpcSecurity security;
  security.token = rpc::RpcSecurity::tokenOrEnvironment(a.token);
  security.tlsCa = a.tlsCa;
  security.tlsTargetName = a.tlsTargetName;
  return security;
}

std::unique_ptr<tune::Runner> makeRunner(const RunnerArgs& a, const tune::LocalRunnerOptions& measure) {
  if (a.runner == "local") return std::make_unique<tune::LocalRunner>(measure);
  TESSEL_CHECK(a.runner == "rpc", "--runner: unknown runner '{}' (local, rpc)", a.runner);
  TESSEL_CHECK(!a.key.empty(), "--runner rpc needs --key: the device key to measure on (see `tessel query`)");
  rpc::RpcRunnerOptions o;
  o.tracker = withDefaultPort(a.tracker, 9190);
  o.key = a.key;
  o.priority = a.priority;
  o.deviceWaitSeconds = a.deviceWait;
  o.maxDevices = a.maxDevices;
  o.maxAttempts = a.maxAttempts;
  o.measure = measure;
  o.security = clientSecurity(a);
  auto runner = std::make_unique<rpc::RpcRunner>(o);
  int devices = runner->checkDevicesRegistered();
  fmt::print("Measuring on the devices of key '{}' at the tracker {} ({} registered now)\n", o.key, o.tracker, devices);
  return runner;
}

driver::NetworkTiming benchmarkOnRemoteDevice(const RunnerArgs& a, const std::string& directory, int number, int repeat,
                             double minRepeatMs) {
  rpc::RpcSecurity security = clientSecurity(a);
  runtime::TimeEvaluatorOptions timing;
  timing.number = number;
  timing.repeat = repeat;
  timing.minRepeatMs = minRepeatMs;
  std::string address;
  auto r = rpc::benchmarkRemoteModule(withDefaultPort(a.tracker, 9190), a.key, security, directory, timing, 600,
                                      std::chrono::milliseconds(int64_t(a.deviceWait * 1000)), &address);
  fmt::print("Mean inference time (std dev): {:.2f} ms ({:.2f} ms)\n", r.mean * 1e3, r.stddev * 1e3);
  fmt::print("median {:.3f} ms, min {:.3f} ms over {} measurements of {} runs, on the '{}' device at {}\n",
             r.median * 1e3, r.min * 1e3, r.costs.size(), r.number, a.key, address);
  return {r.mean * 1e3, r.stddev * 1e3};
}

void addRpcCommands(CLI::App& app) {
  addTrackerOptions(app.add_subcommand("tracker", "run the RPC tracker: device servers register with it, tuners lease devices from it"));
  addDeviceServerOptions(
      app.add_subcommand("server", "run a device server: measures uploaded candidates for tuners, registered with a tracker"),
      vta::findVtaWorker);

  auto query = std::make_shared<QueryArgs>();
  CLI::App* q = app.add_subcommand("query", "print the tracker's queue status: devices per key, free, pending requests");
  q->add_option("--host", query->host, "the tracker's host");
  q->add_option("--port", query->port, "the tracker's port")->check(integerIn(1, 65535));
  q->add_flag("--devices", query->devices, "also list every registered server");
  q->add_option("--hardware", query->hardwareKey,
                "instead, print the hardware parameters of a free device of this key; with --device, the parameter of "
                "that name (max_threads_per_block, max_shared_memory_per_block, warp_size, max_vthread_extent, ...; all: every one)");
  q->add_option("--device", query->device,
                "query a device of this machine instead of the tracker: cpu (its machine model), cuda[:N] or opencl[:N]");
  q->add_option("--target", query->target, "--device cpu: the machine model of this CPU target instead (e.g. \"cpu -mcpu=haswell\")");
  q->add_option("--wait", query->wait, "--hardware: seconds to wait for a free device")->check(numberIn(0.0, 86400.0));
  addSecurityOptions(q, query->security, false, true);
  q->callback([query] { runQuery(*query); });
}

passes::GpuLimits gpuLimitsOfDevices(const RunnerArgs& a, const std::string& target) {
  std::string device;
  auto info = rpc::queryRemoteHardware(withDefaultPort(a.tracker, 9190), a.key, clientSecurity(a),
                                       std::chrono::milliseconds(int64_t(a.deviceWait * 1000)), &device);
  std::string kind = target.substr(0, target.find(' '));
  TESSEL_CHECK(!info.gpuDevice.empty(), "--target {}: the '{}' device at {} measures CPU kernels; start its server with `tessel server "
               "--device {} --key {}`", target, a.key, device, kind, a.key);
  TESSEL_CHECK(info.gpuDevice.rfind(kind, 0) == 0, "--target {}: the '{}' device at {} measures on {}, not on a {} device", target, a.key,
               device, info.gpuDevice, kind);
  fmt::print("Devices of key '{}' (asked {}): {}; kernels are verified against its limits\n", a.key, device, info.toString());
  return info.gpuLimits;
}

std::string targetForDevices(const RunnerArgs& a, const std::string& target) {
  if (a.runner != "rpc" || target::Target::parse(target).numCores > 0) return target;
  std::string device;
  auto info = rpc::queryRemoteHardware(withDefaultPort(a.tracker, 9190), a.key, clientSecurity(a),
                                       std::chrono::milliseconds(int64_t(a.deviceWait * 1000)), &device);
  TESSEL_CHECK(info.cores >= 1, "the '{}' device at {} reports {} cores", a.key, device, info.cores);
  std::string scheduled = fmt::format("{} -num-cores={}", target, info.cores);
  fmt::print("Devices of key '{}' (asked {}): {}; kernels are scheduled for target '{}'\n", a.key, device, info.toString(),
             scheduled);
  return scheduled;
}

}  // namespace tessel::cli
