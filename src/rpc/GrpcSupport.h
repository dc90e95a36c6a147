/// The gRPC plumbing shared by the tracker, the device server and their clients (internal to
/// src/rpc: the public headers keep gRPC out, so that code using them compiles fast): channel
/// and server credentials from an RpcSecurity, the token check every service call starts with,
/// starting a server on an address with errors that name it, and statuses as readable text.
#pragma once
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "rpc/Security.h"

namespace tessel::rpc {

/// The metadata entry that carries the shared-secret token.
inline constexpr const char* kTokenMetadata = "x-tessel-token";

/// A channel to `address` (host:port), over TLS when security.tlsCa is set. Throws Error when a
/// certificate file cannot be read.
std::shared_ptr<grpc::Channel> makeChannel(const std::string& address, const RpcSecurity& security);

/// Sets the deadline and the token of a client call.
void prepareCall(grpc::ClientContext& context, const RpcSecurity& security, std::chrono::milliseconds timeout);

/// OK when the call carries the expected token (or none is expected); else UNAUTHENTICATED
/// with a message saying what to set. `service` names the refusing side ("tracker").
grpc::Status checkToken(const grpc::ServerContext& context, const std::string& expected, const std::string& service);

/// Builds and starts a server for `services` on host:port (port 0: any free port, reported in
/// *boundPort). Throws Error naming the address when it cannot listen (port in use, bad host,
/// unreadable certificate). SO_REUSEPORT is off, so a second server on a busy port fails
/// instead of silently sharing it.
std::unique_ptr<grpc::Server> startServer(const std::vector<grpc::Service*>& services, const std::string& host,
                                          int port, const RpcSecurity& security, int maxReceiveBytes,
                                          int* boundPort, const std::string& what);

/// "UNAVAILABLE: failed to connect to all addresses" (code name, then the message).
std::string statusText(const grpc::Status& status);

/// Whether a failed call means the other side cannot be reached or went away (as opposed to
/// a refusal of the request itself).
bool isConnectionFailure(const grpc::Status& status);

/// "ipv4:127.0.0.1:5000" -> "127.0.0.1"; "ipv6:[::1]:5000" -> "[::1]"; empty when unknown.
std::string peerHost(const std::string& peer);

}  // namespace tessel::rpc
