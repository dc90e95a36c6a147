// tessel-rpc-server: the device server a board runs, with the runtime and RPC only (no compiler,
// no tuner: a board receives compiled kernels and modules, runs and times them). Its options are
// `tessel server`'s (RpcServices.h):
//   tessel-rpc-server --tracker HOST:9190 --key rasp4b
// measures with tessel-device-worker, found beside it (or $TESSEL_DEVICE_WORKER).
#include <CLI/CLI.hpp>

#include <csignal>

#include "cli/ReportErrors.h"
#include "cli/RpcServices.h"
#include "cli/UnknownArguments.h"
#include "support/SignalCleanup.h"

using namespace tessel;

int main(int argc, char** argv) {
  // SIGINT and SIGTERM stop the server (RpcServices.cpp); as in `tessel`, a signal that ends the
  // process otherwise removes what it was writing (SignalCleanup.h), and past a file size limit a
  // write fails with EFBIG instead of SIGXFSZ killing it.
  installSignalCleanup();
  signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"tessel-rpc-server: a device server with tessel's runtime alone; measures what tuners and "
               "`tessel benchmark --runner rpc` upload, registered with a tracker",
               "tessel-rpc-server"};
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", std::string("tessel-rpc-server ") + TESSEL_VERSION, "print the version and exit");
  // No VTA worker of its own: a VTA board's server is given tessel-vta-worker with --worker.
  cli::addDeviceServerOptions(&app, {});
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::reportParseError(app, e);
  } catch (...) {
    return cli::reportCurrentException();
  }
  return 0;
}
