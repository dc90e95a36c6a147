/// Where a tracker or device server may listen, and on what terms. A device server runs the
/// native code its clients upload (loading a kernel library runs its constructors), so whoever
/// reaches its port runs programs as the server's user; whoever reaches a tracker can register a
/// device under any key and so answer a tuner's measurements with invented timings. Both listen
/// on loopback unless told otherwise, and on any other address only with the token (which every
/// call must carry) or with an explicit --insecure, which is warned about at every start. No
/// gRPC here: the command line checks the same policy before anything starts.
#pragma once
#include <string>

namespace tessel::rpc {

/// The address a tracker or device server listens on when none is given: this machine only.
inline constexpr const char* kDefaultListenHost = "127.0.0.1";

/// The service a listen address is checked for: what an unchecked caller could do differs.
enum class ListeningService { Tracker, DeviceServer };

/// Whether `host` is a loopback address: 127.0.0.0/8, ::1 (bracketed or not) or "localhost".
/// Any other (0.0.0.0, ::, an interface's address, a host name) is, or may be, reachable from
/// other machines.
bool isLoopbackHost(const std::string& host);

/// Why `service` must not listen on `host` with `token` ("" when it may): a non-loopback
/// address without a token and without `insecure`. The text names --token and --insecure.
std::string listenRefusal(ListeningService service, const std::string& host, const std::string& token, bool insecure);

/// The warning to print at every start of `service` listening on a non-loopback `host` without
/// a token (which only `insecure` allows); "" otherwise.
std::string listenWarning(ListeningService service, const std::string& host, const std::string& token);

}  // namespace tessel::rpc
