/// The tracker service (`tessel tracker`): the network face of DeviceQueues. Device servers
/// register under a key and send heartbeats; clients ask for a device of a key (waiting with a
/// priority and a timeout), renew and release their leases, and read the queue status. A
/// background thread drops silent devices and ends overdue leases. Every call is checked
/// against the token when one is set; malformed requests get INVALID_ARGUMENT naming the field.
/// Whoever reaches a tracker can register a device under any key, so it listens on loopback
/// unless `host` says otherwise, and on another address only with a token or `insecure`
/// (rpc/ListenPolicy.h).
#pragma once
#include <memory>
#include <string>

#include "rpc/ListenPolicy.h"
#include "rpc/Security.h"

namespace tessel::rpc {

struct TrackerOptions {
  std::string host = kDefaultListenHost;  ///< not loopback: needs a token or `insecure`
  bool insecure = false;                  ///< allows a non-loopback host without a token
  int port = 9190;                    ///< 0: any free port (see TrackerServer::port())
  double deviceTimeoutSeconds = 10;   ///< a server silent this long is dropped
  double heartbeatSeconds = 1;        ///< how often servers are asked to send a heartbeat
  RpcSecurity security;               ///< token, TLS certificate and key
};

class TrackerServer {
 public:
  /// Binds and starts serving. Throws Error naming the address when it cannot listen, or may not
  /// (a non-loopback host without a token or `insecure`).
  explicit TrackerServer(TrackerOptions options);
  ~TrackerServer();  ///< shuts down (waiting clients are answered UNAVAILABLE)
  TrackerServer(const TrackerServer&) = delete;
  TrackerServer& operator=(const TrackerServer&) = delete;

  int port() const;
  /// host:port as bound, e.g. "127.0.0.1:9190".
  std::string address() const;
  /// Blocks until shutdown() is called (from another thread or a signal handler's thread).
  void wait();
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::rpc
