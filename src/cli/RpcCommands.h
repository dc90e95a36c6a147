/// The remote-measurement commands, as the seeds use them:
///   tessel tracker --host 0.0.0.0 --port 9190            (prints "bind to 0.0.0.0:9190")
///   tessel server --tracker HOST:9190 --key KEY          (a device server for that key)
///   tessel query --host HOST --port 9190                 (the "Queue Status" table)
/// Each runs until SIGINT or SIGTERM (tracker, server) and shares the security options
/// --token (or $TESSEL_RPC_TOKEN) and --tls-cert/--tls-key (serving) or --tls-ca (connecting).
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addRpcCommands(CLI::App& app);

}  // namespace tessel::cli
