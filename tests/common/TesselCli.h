/// Test support: where the `tessel` program the CLI tests spawn is, and running it. The tests run from the build
/// tree, where CMake knows the path, and from a bundle copied to another machine (the GPU tests
/// on a GPU host, scripts/gpu-test-bundle.sh), where they find the program beside themselves,
/// as the runner finds its measurement worker (tune/MeasureWorkerClient.h).
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/Subprocess.h"

#ifndef TESSEL_CLI_PATH
#error "a test that spawns tessel is built with TESSEL_CLI_PATH=$<TARGET_FILE:tessel> (see tests/*/CMakeLists.txt)"
#endif

namespace tessel::testsupport {

/// $TESSEL_CLI when set; else `tessel` beside the running test; else the build tree's.
inline std::string tesselCli() {
  if (const char* env = std::getenv("TESSEL_CLI"); env && *env) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string beside = (self.parent_path() / "tessel").string();
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
  return TESSEL_CLI_PATH;
}

/// Runs `tessel ARGUMENTS` (stdout and stderr together), killed after `timeoutSeconds`.
inline SubprocessResult runTessel(std::vector<std::string> arguments, int timeoutSeconds = 300) {
  arguments.insert(arguments.begin(), tesselCli());
  SubprocessOptions options;
  options.timeout = std::chrono::seconds(timeoutSeconds);
  return runSubprocess(arguments, options);
}

}  // namespace tessel::testsupport
