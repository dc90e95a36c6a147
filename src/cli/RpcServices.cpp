#include "cli/RpcServices.h"

#include <fmt/format.h>
#include <signal.h>

#include <cstdio>
#include <memory>
#include <thread>

#include "cli/OptionChecks.h"
#include "rpc/Tracker.h"
#include "runtime/Device.h"
#include "support/Error.h"

namespace tessel::cli {

namespace {

void printLine(const std::string& line) {
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

/// Blocks SIGINT and SIGTERM in this thread, and so in every thread started after it (gRPC's):
/// call before starting a server, or a signal may land on one of its threads and kill the
/// process without a clean shutdown.
sigset_t blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

/// A thread that waits for SIGINT or SIGTERM (blocked by blockStopSignals) and calls `stop`.
void stopOnSignal(sigset_t set, std::function<void()> stop) {
  std::thread([set, stop = std::move(stop)] {
    int signal = 0;
    sigwait(&set, &signal);
    stop();
  }).detach();
}

/// --host and --insecure of a service, with the policy checked when the command line is read:
/// a non-loopback host without a token is a usage error (exit code 2) before anything starts.
void addListenOptions(CLI::App* c, rpc::ListeningService service, std::string& host, bool& insecure,
                      const SecurityArgs& security) {
  c->add_option("--host", host,
                fmt::format("address to listen on (default {}: this machine only; any other needs --token or --insecure)",
                            rpc::kDefaultListenHost));
  c->add_flag("--insecure", insecure, "allow listening on a non-loopback --host without a token (warned at every start)");
  c->parse_complete_callback([service, &host, &insecure, &security] {
    std::string refusal = rpc::listenRefusal(service, host, rpc::RpcSecurity::tokenOrEnvironment(security.token), insecure);
    if (!refusal.empty()) throw CLI::ValidationError("--host", refusal);
  });
}

/// Prints the policy's warning for an insecure listener, at every start.
void warnAboutListening(rpc::ListeningService service, const std::string& host, const rpc::RpcSecurity& security) {
  std::string warning = rpc::listenWarning(service, host, security.token);
  if (!warning.empty()) fmt::print(stderr, "{}\n", warning);
}

struct TrackerArgs {
  rpc::TrackerOptions options;
  SecurityArgs security;
};

void runTracker(TrackerArgs& a) {
  a.options.security = a.security.security();
  auto signals = blockStopSignals();
  rpc::TrackerServer tracker(a.options);
  printLine(fmt::format("bind to {}", tracker.address()));
  warnAboutListening(rpc::ListeningService::Tracker, a.options.host, a.options.security);
  stopOnSignal(signals, [&tracker] { tracker.shutdown(); });
  tracker.wait();
}

struct ServerArgs {
  rpc::DeviceServerOptions options;
  double maxUploadMb = 1024;
  SecurityArgs security;
  std::string device = "cpu";  ///< what the server measures on: cpu (kernels), a GPU, or vta (programs on the simulator)
  VtaWorkerFinder vtaWorker;
};

void runServer(ServerArgs& a) {
  if (!a.options.tracker.empty()) a.options.tracker = withDefaultPort(a.options.tracker, 9190);
  if (!a.options.customAddress.empty()) withDefaultPort(a.options.customAddress, a.options.port, "--custom-addr");
  TESSEL_CHECK(a.options.port == 0 || a.options.portEnd >= a.options.port, "--port-end {} is below --port {}", a.options.portEnd,
               a.options.port);
  TESSEL_CHECK(a.maxUploadMb > 0 && a.maxUploadMb < 2000, "--max-upload-mb must be between 0 and 2000, got {}",
               a.maxUploadMb);
  a.options.maxUploadBytes = int64_t(a.maxUploadMb * (1 << 20));
  if (a.device != "cpu" && a.device != "vta") {
    runtime::Device device;
    try {
      device = runtime::Device::parse(a.device);
    } catch (const Error& e) {
      fail("--device {}: not cpu, cuda[:N], opencl[:N] or vta ({})", a.device, e.what());
    }
    TESSEL_CHECK(device.kind == runtime::DeviceKind::CUDA || device.kind == runtime::DeviceKind::OpenCL,
                 "--device {}: not cpu, cuda[:N], opencl[:N] or vta", a.device);
    a.options.gpuDevice = a.device;
  }
  if (a.device == "vta") {
    // VTA candidates are program files, run by the VTA worker on the simulator.
    TESSEL_CHECK(a.options.workerPath.empty(), "--device vta brings its own worker; leave out --worker");
    TESSEL_CHECK(a.vtaWorker, "--device vta: this server has no VTA worker of its own; run `tessel server --device vta`, or "
                              "give the worker: --worker PATH/tessel-vta-worker --arch vta");
    a.options.workerPath = a.vtaWorker();
    if (a.options.arch.empty()) a.options.arch = "vta";
  }
  a.options.security = a.security.security();
  a.options.log = printLine;
  auto signals = blockStopSignals();
  rpc::DeviceServer server(a.options);
  warnAboutListening(rpc::ListeningService::DeviceServer, a.options.host, a.options.security);
  stopOnSignal(signals, [&server] { server.shutdown(); });
  server.wait();
  std::string fatal = server.fatalError();
  if (!fatal.empty()) throw Error(fatal);
}

}  // namespace

std::string withDefaultPort(const std::string& address, int port, const char* option) {
  TESSEL_CHECK(!address.empty(), "{}: empty address (expected HOST:PORT)", option);
  size_t colon = address.rfind(':');
  bool hasPort = colon != std::string::npos && address.back() != ']' && (address[0] != '[' || address.find(']') < colon);
  if (!hasPort) return fmt::format("{}:{}", address, port);
  std::string host = address.substr(0, colon), text = address.substr(colon + 1);
  TESSEL_CHECK(!host.empty(), "{} '{}': no host before the port", option, address);
  TESSEL_CHECK(!text.empty() && text.size() <= 5 && text.find_first_not_of("0123456789") == std::string::npos,
               "{} '{}': the port '{}' is not a number in [1, 65535]", option, address, text);
  int number = std::stoi(text);
  TESSEL_CHECK(number >= 1 && number <= 65535, "{} '{}': port {} is out of range [1, 65535]", option, address, text);
  return address;
}

rpc::RpcSecurity SecurityArgs::security() const {
  return {rpc::RpcSecurity::tokenOrEnvironment(token), tlsCert, tlsKey, tlsCa, tlsTargetName};
}

void addSecurityOptions(CLI::App* c, SecurityArgs& s, bool serves, bool connects) {
  c->add_option("--token", s.token, "shared secret every call carries and every service checks (default: $TESSEL_RPC_TOKEN)");
  if (serves) {
    c->add_option("--tls-cert", s.tlsCert, "serve over TLS with this PEM certificate");
    c->add_option("--tls-key", s.tlsKey, "the PEM private key of --tls-cert");
  }
  if (connects) {
    c->add_option("--tls-ca", s.tlsCa, "connect over TLS, trusting this PEM CA certificate");
    c->add_option("--tls-target-name", s.tlsTargetName, "host name to check the certificate against (default: the host)");
  }
}

void addTrackerOptions(CLI::App* t) {
  auto tracker = std::make_shared<TrackerArgs>();
  addListenOptions(t, rpc::ListeningService::Tracker, tracker->options.host, tracker->options.insecure, tracker->security);
  t->add_option("--port", tracker->options.port, "port to listen on (0: any free port)")->check(integerIn(0, 65535));
  t->add_option("--device-timeout", tracker->options.deviceTimeoutSeconds, "drop a server silent for this many seconds")
      ->check(numberIn(0.1, 86400.0));
  t->add_option("--heartbeat-interval", tracker->options.heartbeatSeconds, "seconds between a server's heartbeats")
      ->check(numberIn(0.01, 3600.0));
  addSecurityOptions(t, tracker->security, true, false);
  t->callback([tracker] { runTracker(*tracker); });
}

void addDeviceServerOptions(CLI::App* s, VtaWorkerFinder vtaWorker) {
  auto server = std::make_shared<ServerArgs>();
  server->vtaWorker = std::move(vtaWorker);
  s->add_option("--tracker", server->options.tracker, "the tracker's HOST:PORT (without it: a standalone server)");
  s->add_option("--key", server->options.key, "the device key to register under (e.g. rk3399, aarch64-qemu)");
  addListenOptions(s, rpc::ListeningService::DeviceServer, server->options.host, server->options.insecure, server->security);
  s->add_option("--port", server->options.port, "first port to try (0: any free port)")->check(integerIn(0, 65535));
  s->add_option("--port-end", server->options.portEnd, "last port to try")->check(integerIn(0, 65535));
  s->add_option("--custom-addr", server->options.customAddress, "HOST:PORT clients should connect to (default: as the tracker sees this server)");
  s->add_option("--name", server->options.name, "a name shown by `tessel query --devices`");
  s->add_option("--max-upload-mb", server->maxUploadMb, "largest file a client may upload, in MiB")->check(numberIn(0.001, 2000.0));
  s->add_option("--session-timeout", server->options.sessionTimeoutSeconds, "close a session idle for this many seconds")
      ->check(numberIn(0.1, 86400.0));
  s->add_option("--max-run-timeout", server->options.maxRunSeconds,
                "the longest one measurement may run, in seconds, whatever timeout its client asks (default 300)")
      ->check(numberIn(0.1, 86400.0));
  s->add_option("--worker", server->options.workerPath, "the measurement worker program (or a wrapper, e.g. one running it under qemu)");
  s->add_option("--arch", server->options.arch, "architecture to report (default: this machine's)");
  s->add_option("--device", server->device,
                "what candidates run on: cpu (compiled kernels, default), cuda[:N] or opencl[:N] (GPU kernels on that device of "
                "this machine, whose limits the server reports) or vta (VTA programs on the simulator)");
  addSecurityOptions(s, server->security, true, true);
  s->callback([server] { runServer(*server); });
}

}  // namespace tessel::cli
