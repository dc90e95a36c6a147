#include "rpc/ListenPolicy.h"

#include <arpa/inet.h>
#include <fmt/format.h>

namespace tessel::rpc {

namespace {

const char* serviceName(ListeningService service) {
  return service == ListeningService::Tracker ? "tracker" : "device server";
}

/// What anyone who reaches the service can do when it checks no token.
const char* exposure(ListeningService service) {
  return service == ListeningService::Tracker
             ? "register a device under any key and answer tuners' measurements with invented timings"
             : "run native code on this machine as this user (a device server runs the kernels it is sent)";
}

}  // namespace

bool isLoopbackHost(const std::string& host) {
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

std::string listenRefusal(ListeningService service, const std::string& host, const std::string& token, bool insecure) {
  if (isLoopbackHost(host) || !token.empty() || insecure) return "";
  return fmt::format("the {} would listen on {} without a token: anyone who can reach it could {}. Pass --token SECRET "
                     "(or set TESSEL_RPC_TOKEN; clients pass the same), or --insecure to serve without one on a network "
                     "you trust, or leave out --host to listen on {} only",
                     serviceName(service), host, exposure(service), kDefaultListenHost);
}

std::string listenWarning(ListeningService service, const std::string& host, const std::string& token) {
  if (isLoopbackHost(host) || !token.empty()) return "";
  return fmt::format("warning: the {} listens on {} without a token (--insecure): anyone who can reach it can {}",
                     serviceName(service), host, exposure(service));
}

}  // namespace tessel::rpc
