/// Test support: running the `tessel` command the way a user's shell would, under limits
/// (bash's `ulimit`: a memory or file size limit), in a directory and with environment
/// variables, and checking that a failure is the one error path's (TesselCli.h finds the
/// program).
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "common/TesselCli.h"
#include "support/Subprocess.h"

namespace tessel::testsupport {

struct TesselRun {
  std::string limits;     ///< `ulimit` options set first, e.g. "-d 1048576" (1 GiB of data)
  std::string directory;  ///< working directory (empty: the test's)
  std::vector<std::pair<std::string, std::string>> environment;
  int timeoutSeconds = 300;

  static TesselRun limitedBy(std::string limits) {
    TesselRun run;
    run.limits = std::move(limits);
    return run;
  }
  static TesselRun inDirectory(std::string directory) {
    TesselRun run;
    run.directory = std::move(directory);
    return run;
  }
};

/// Runs `tessel ARGUMENTS` through bash, which applies the limits and the environment and then
/// execs tessel: the result (exit code, signal, output, seconds) is tessel's own.
inline SubprocessResult runTessel(const TesselRun& how, const std::vector<std::string>& arguments) {
  std::string script = how.limits.empty() ? "" : "ulimit " + how.limits + " || exit 99; ";
  script += "exec env";
  for (size_t i = 0; i < how.environment.size(); ++i) script += " \"$" + std::to_string(i + 2) + "\"";
  script += " \"$1\" \"${@:" + std::to_string(how.environment.size() + 2) + "}\"";
  std::vector<std::string> argv = {"bash", "-c", script, "bash", tesselCli()};
  for (const auto& [name, value] : how.environment) argv.push_back(name + "=" + value);
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  SubprocessOptions options;
  options.timeout = std::chrono::seconds(how.timeoutSeconds);
  options.workingDirectory = how.directory;
  return runSubprocess(argv, options);
}

/// A failure as the one error path reports it: exit code 1 (not a signal, not an abort), with
/// `part` in the output.
inline void expectCleanError(const SubprocessResult& r, const std::string& part) {
  EXPECT_EQ(r.signal, 0) << r.describe() << "\n" << r.output;
  EXPECT_FALSE(r.timedOut) << r.output;
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in:\n" << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

}  // namespace tessel::testsupport
