/// The remote-measurement commands, as the seeds use them:
///   tessel tracker --host 0.0.0.0 --port 9190            (prints "bind to 0.0.0.0:9190")
///   tessel server --tracker HOST:9190 --key KEY          (a device server for that key)
///   tessel query --host HOST --port 9190                 (the "Queue Status" table)
/// Each runs until SIGINT or SIGTERM (tracker, server) and shares the security options
/// --token (or $TESSEL_RPC_TOKEN) and --tls-cert/--tls-key (serving) or --tls-ca (connecting).
/// The tracker's and the server's command lines are RpcServices.h's (tessel-rpc-server has the
/// server's too).
///
/// Also the runner choice of the commands that measure (`tessel tune`):
///   --runner local|rpc  --key KEY  --tracker HOST:PORT  [--priority N] [--device-wait S] ...
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "driver/TuneNetworkOptions.h"
#include "passes/GpuLimits.h"
#include "tune/LocalRunner.h"
#include "tune/MeasureBatch.h"

namespace tessel::cli {

void addRpcCommands(CLI::App& app);

/// Where candidates are measured: this machine's worker, or devices behind a tracker.
struct RunnerArgs {
  std::string runner = "local";
  std::string key, tracker = "127.0.0.1:9190", token, tlsCa, tlsTargetName;
  int priority = 1, maxDevices = 0, maxAttempts = 3;
  double deviceWait = 60;
};
/// Adds --runner, --key, --tracker and the rpc runner's options to a command.
void addRunnerOptions(CLI::App* command, RunnerArgs& args);
/// The runner the options ask for, measuring with `measure`'s timing options. Throws Error for
/// an unknown runner or a missing --key.
std::unique_ptr<tune::Runner> makeRunner(const RunnerArgs& args, const tune::LocalRunnerOptions& measure);

/// The target the kernels are scheduled for: with `--runner rpc` and no `-num-cores` in
/// `target`, the target with the cores a free device of the key reports (a schedule's thread
/// partition is made for the cores the kernels will run on); otherwise `target` itself.
std::string targetForDevices(const RunnerArgs& args, const std::string& target);

/// The limits GPU kernels are tuned for with `--runner rpc`: those a free device of the key
/// reports (seed 001 reads them from the device). Error naming the key when its servers
/// measure CPU kernels (no `--device cuda|opencl`) or a GPU of another kind than the target's.
passes::GpuLimits gpuLimitsOfDevices(const RunnerArgs& args, const std::string& target);

/// `tessel benchmark DIR --runner rpc`: times the compiled module on a free device of the key
/// and prints the seeds' "Mean inference time (std dev)" line and the device; returns the mean
/// and standard deviation (ms).
driver::NetworkTiming benchmarkOnRemoteDevice(const RunnerArgs& args, const std::string& directory, int number, int repeat,
                             double minRepeatMs);

}  // namespace tessel::cli
