/// A device server (`tessel server --tracker HOST:9190 --key KEY`): registers with the tracker
/// under a key and keeps a heartbeat (registering again by itself when the tracker has
/// restarted or dropped it), and serves one client session at a time: uploads go into the
/// session's own temporary directory (plain names only, up to a size limit), candidates are
/// measured through the same isolated measurement worker the local runner uses (a crashing
/// kernel kills the worker, never the server), and the machine's hardware parameters are
/// answered on request. With a GPU device, candidates are GPU modules (a manifest and its code,
/// uploaded as two files) run on that device, and whole modules are timed there. A session idle
/// for longer than the session timeout is closed, so a client that died does not hold the device
/// forever; a measurement whose client is gone (its deadline passed, its stream closed) has its
/// worker killed within WorkerProcess::kCancelPoll and closes the session, and no measurement
/// runs longer than the server's maximum, whatever its request asks.
///
/// It runs the native code it is sent: it listens on loopback unless `host` says otherwise, and
/// on another address only with a token or `insecure` (rpc/ListenPolicy.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "rpc/HardwareInfo.h"
#include "rpc/ListenPolicy.h"
#include "rpc/Security.h"

namespace tessel::rpc {

struct DeviceServerOptions {
  std::string tracker;               ///< host:port of the tracker; empty: serve without registering
  std::string key;                   ///< the device key it registers under (required with a tracker)
  std::string host = kDefaultListenHost;  ///< where it listens (not loopback: needs a token or `insecure`)
  bool insecure = false;             ///< allows a non-loopback host without a token
  int port = 9090;                   ///< the first port tried (0: any free port)
  int portEnd = 9199;                ///< the last port tried
  std::string customAddress;         ///< host:port clients should use; empty: the host the tracker sees
  std::string name;                  ///< shown in `tessel query --devices`
  int64_t maxUploadBytes = int64_t(1) << 30; ///< the largest file a client may upload (a network's params)
  double sessionTimeoutSeconds = 60; ///< an idle session is closed after this long
  /// The longest one measurement (a candidate, a module's benchmark) may run, whatever timeout
  /// its request asks: one client cannot hold the device longer (--max-run-timeout).
  double maxRunSeconds = 300;
  std::string workerPath;            ///< the measurement worker (a program or a wrapper script); empty: the default
  std::string arch;                  ///< reported architecture; empty: this machine's (another: an emulated worker)
  /// The GPU candidates run on ("cuda", "opencl:1"; `tessel server --device`); empty: CPU
  /// kernels. Its limits are reported with the hardware parameters, and a GPU candidate for
  /// another kind of device is refused.
  std::string gpuDevice;
  RpcSecurity security;              ///< token (checked and sent), TLS cert/key (served), TLS CA (for the tracker)
  /// Progress lines ("bind to ...", "registered with ..."); null: silent.
  std::function<void(const std::string&)> log;
};

class DeviceServer {
 public:
  /// Binds (the first free port of the range) and starts serving and registering. Throws Error
  /// for bad options or when no port of the range can be bound.
  explicit DeviceServer(DeviceServerOptions options);
  ~DeviceServer();
  DeviceServer(const DeviceServer&) = delete;
  DeviceServer& operator=(const DeviceServer&) = delete;

  int port() const;
  /// Blocks until shutdown(), or until the tracker refuses the registration for good (a wrong
  /// token, a malformed key): then fatalError() says why.
  void wait();
  void shutdown();
  std::string fatalError() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::rpc
