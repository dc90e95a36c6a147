#include "rpc/GrpcSupport.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "support/Error.h"

namespace tessel::rpc {

namespace {

std::string readPem(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  TESSEL_CHECK(in, "cannot read the TLS {} file '{}': {}", what, path, std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  TESSEL_CHECK(text.str().find("-----BEGIN") != std::string::npos, "the TLS {} file '{}' is not in PEM format", what,
               path);
  return text.str();
}

/// Constant-time comparison, so that the time a refusal takes says nothing about the token.
bool sameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

const char* codeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK: return "OK";
    case grpc::CANCELLED: return "CANCELLED";
    case grpc::UNKNOWN: return "UNKNOWN";
    case grpc::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND: return "NOT_FOUND";
    case grpc::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::ABORTED: return "ABORTED";
    case grpc::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::INTERNAL: return "INTERNAL";
    case grpc::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::DATA_LOSS: return "DATA_LOSS";
    default: return "UNKNOWN";
  }
}

}  // namespace

std::string RpcSecurity::tokenOrEnvironment(const std::string& token) {
  if (!token.empty()) return token;
  const char* env = std::getenv("TESSEL_RPC_TOKEN");
  return env ? env : "";
}

std::shared_ptr<grpc::Channel> makeChannel(const std::string& address, const RpcSecurity& security) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(-1);
  // Reconnect quickly after a tracker or server restart (gRPC's default backoff grows to 2 min).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 1000);  // also the shortest connect timeout
  // After a failed connection the channel resolves the name again, by default at most every
  // 30 s: a channel that first tried while the tracker was down stayed down for seconds.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 200);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (!security.tlsCa.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = readPem(security.tlsCa, "CA certificate");
    credentials = grpc::SslCredentials(ssl);
    if (!security.tlsTargetName.empty()) args.SetSslTargetNameOverride(security.tlsTargetName);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(address, credentials, args);
}

void prepareCall(grpc::ClientContext& context, const RpcSecurity& security, std::chrono::milliseconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  if (!security.token.empty()) context.AddMetadata(kTokenMetadata, security.token);
}

grpc::Status checkToken(const grpc::ServerContext& context, const std::string& expected, const std::string& service) {
  if (expected.empty()) return grpc::Status::OK;
  auto entries = context.client_metadata().equal_range(kTokenMetadata);
  if (entries.first == entries.second)
    return {grpc::UNAUTHENTICATED,
            fmt::format("the {} requires a token and the call carried none (pass --token or set TESSEL_RPC_TOKEN)",
                        service)};
  std::string given(entries.first->second.data(), entries.first->second.size());
  if (!sameSecret(given, expected))
    return {grpc::UNAUTHENTICATED,
            fmt::format("the {} refused the call: wrong token (check --token or TESSEL_RPC_TOKEN)", service)};
  return grpc::Status::OK;
}

std::unique_ptr<grpc::Server> startServer(const std::vector<grpc::Service*>& services, const std::string& host,
                                          int port, const RpcSecurity& security, int maxReceiveBytes,
                                          int* boundPort, const std::string& what) {
  TESSEL_CHECK(port >= 0 && port <= 65535, "{}: port {} is out of range (0..65535)", what, port);
  TESSEL_CHECK(security.tlsCert.empty() == security.tlsKey.empty(),
               "{}: TLS needs both a certificate (--tls-cert) and its key (--tls-key)", what);
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (!security.tlsCert.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({readPem(security.tlsKey, "key"), readPem(security.tlsCert, "certificate")});
    credentials = grpc::SslServerCredentials(ssl);
  } else {
    credentials = grpc::InsecureServerCredentials();
  }
  std::string address = host.find(':') != std::string::npos && host.front() != '['
                            ? fmt::format("[{}]:{}", host, port)
                            : fmt::format("{}:{}", host, port);
  grpc::ServerBuilder builder;
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(maxReceiveBytes);
  *boundPort = 0;
  builder.AddListeningPort(address, credentials, boundPort);
  for (auto* s : services) builder.RegisterService(s);
  auto server = builder.BuildAndStart();
  TESSEL_CHECK(server && *boundPort > 0, "{}: cannot listen on {} (is the port in use or the host not an address "
               "of this machine?)", what, address);
  return server;
}

std::string statusText(const grpc::Status& status) {
  return fmt::format("{}: {}", codeName(status.error_code()), status.error_message());
}

bool isConnectionFailure(const grpc::Status& status) {
  auto code = status.error_code();
  return code == grpc::UNAVAILABLE || code == grpc::DEADLINE_EXCEEDED || code == grpc::CANCELLED ||
         code == grpc::ABORTED || code == grpc::INTERNAL || code == grpc::UNKNOWN;
}

std::string peerHost(const std::string& peer) {
  std::string rest;
  if (peer.rfind("ipv4:", 0) == 0) rest = peer.substr(5);
  else if (peer.rfind("ipv6:", 0) == 0) rest = peer.substr(5);
  else return "";
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) return "";
  std::string host = rest.substr(0, colon);
  // gRPC percent-encodes the brackets of IPv6 peers.
  for (auto [from, to] : {std::pair<const char*, const char*>{"%5B", "["}, {"%5D", "]"}}) {
    for (size_t at; (at = host.find(from)) != std::string::npos;) host.replace(at, 3, to);
  }
  return host;
}

}  // namespace tessel::rpc
