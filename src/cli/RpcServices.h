/// The command lines of the RPC services, shared by `tessel tracker`, `tessel server` and the
/// runtime-only device server tessel-rpc-server (RpcServerMain.cpp), with the pieces the other
/// RPC commands (`tessel query`, `--runner rpc`) use too: the security options, the listening
/// policy checked as the command line is read, HOST:PORT with the tracker's default port, and
/// the stop signals. Nothing of the compiler is in here: a board's server links it.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "rpc/DeviceServer.h"
#include "rpc/ListenPolicy.h"
#include "rpc/Security.h"

namespace tessel::cli {

/// "HOST:PORT", or "HOST" with the tracker's default port. The port must be a number in
/// [1, 65535]: gRPC would wrap 70000 around to another port and contact another server.
std::string withDefaultPort(const std::string& address, int port, const char* option = "--tracker");

/// --token and the TLS options as given.
struct SecurityArgs {
  std::string token, tlsCert, tlsKey, tlsCa, tlsTargetName;
  rpc::RpcSecurity security() const;
};

/// --token, and --tls-cert/--tls-key for a command that `serves`, --tls-ca/--tls-target-name
/// for one that `connects`.
void addSecurityOptions(CLI::App* command, SecurityArgs& security, bool serves, bool connects);

/// `tessel tracker`'s options and its run, on `command`.
void addTrackerOptions(CLI::App* command);

/// Where a device server's `--device vta` finds the VTA measurement worker; empty: this program
/// has none, and `--device vta` is refused with the way to get one.
using VtaWorkerFinder = std::function<std::string()>;

/// A device server's options (`tessel server`, tessel-rpc-server) and its run, on `command`:
/// --tracker, --key, --host, --port ... --device cpu|cuda[:N]|opencl[:N]|vta. Runs until SIGINT
/// or SIGTERM, printing its progress lines ("bind to ...", "registered with ...").
void addDeviceServerOptions(CLI::App* command, VtaWorkerFinder vtaWorker);

}  // namespace tessel::cli
