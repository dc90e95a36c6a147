/// Test support: a stand-in measurement worker, for tests of what a runner or a device server
/// does with the answers it gets (a rogue `tessel server --worker fake.sh`). A shell script that
/// speaks the worker's protocol (tune/worker/MeasureSession.h) and measures nothing: it answers
/// every request with the costs it was written with, except that a request for the kernel
/// "sleep" and every module benchmark sleep ten minutes first (a measurement that hangs). At
/// start it writes its pid to `<dir>/fake_worker.pid`.
#pragma once
#include <sys/stat.h>

#include <string>

#include "support/Files.h"

namespace tessel::testsupport {

/// Writes the fake worker into `dir` and returns its path; `costs` is a JSON list's inside
/// ("1e-12, 1e-12").
inline std::string writeFakeWorker(const std::string& dir, const std::string& costs) {
  std::string path = dir + "/fake_worker.sh";
  writeFile(path, "#!/bin/sh\n"
                  "echo $$ > '" + dir + "/fake_worker.pid'\n"
                  "echo '{\"ready\": true, \"protocol\": 1, \"modules\": true}'\n"
                  "while IFS= read -r line; do\n"
                  "  id=$(printf '%s' \"$line\" | sed -n 's/.*\"id\":\\([0-9]*\\).*/\\1/p')\n"
                  "  case \"$line\" in *'\"kernel\":\"sleep\"'* | *'\"module\":'*) sleep 600;; esac\n"
                  "  echo \"{\\\"id\\\": $id, \\\"error_no\\\": 0, \\\"message\\\": \\\"\\\", \\\"costs\\\": [" + costs +
                  "], \\\"number\\\": 1}\"\n"
                  "done\n");
  chmod(path.c_str(), 0755);
  return path;
}

}  // namespace tessel::testsupport
