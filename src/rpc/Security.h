/// How tessel's RPC links are protected: an optional shared-secret token that every call
/// carries and every service checks (tracker and device servers), and optional TLS (a
/// certificate and key for the services, the CA certificate that signed them for clients) for
/// links that leave a private network. No gRPC here: the command line fills this in.
#pragma once
#include <string>

namespace tessel::rpc {

struct RpcSecurity {
  std::string token;    ///< empty: no token is sent and none is checked
  std::string tlsCert;  ///< services: PEM certificate file (with tlsKey: serve over TLS)
  std::string tlsKey;   ///< services: PEM private key file
  std::string tlsCa;    ///< clients: PEM file of the CA to trust (set: connect over TLS)
  /// Overrides the host name checked against the certificate (tests on 127.0.0.1).
  std::string tlsTargetName;

  /// Only a token (no TLS).
  static RpcSecurity withToken(std::string token) {
    RpcSecurity s;
    s.token = std::move(token);
    return s;
  }
  /// `token` if given, else $TESSEL_RPC_TOKEN (empty when unset).
  static std::string tokenOrEnvironment(const std::string& token);
};

}  // namespace tessel::rpc
