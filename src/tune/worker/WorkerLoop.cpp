#include "tune/worker/WorkerLoop.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "support/JsonParse.h"
#include "tune/MeasureErrorNo.h"
#include "tune/worker/MeasureSession.h"

namespace tessel::tune::worker {

namespace {

/// Writes one line to the protocol stream; exits when the reader is gone.
void writeProtocolLine(int fd, const std::string& line) {
  std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(2);
    done += size_t(n);
  }
}

/// Reads one line from fd 0; false at end of input.
bool readProtocolLine(std::string& buffer, std::string& line) {
  for (;;) {
    auto end = buffer.find('\n');
    if (end != std::string::npos) {
      line = buffer.substr(0, end);
      buffer.erase(0, end + 1);
      return true;
    }
    char chunk[65536];
    ssize_t n = read(0, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, size_t(n));
  }
}

}  // namespace

int runWorkerLoop(int argc, char** argv, const WorkerLoopOptions& options) {
  if (argc > 1) {
    std::fprintf(stderr, "usage: %s\n%s (protocol %d).\n", argv[0], options.description.c_str(), kProtocolVersion);
    return std::strcmp(argv[1], "--help") == 0 ? 0 : 64;
  }
  int protocol = dup(1);
  if (protocol < 0 || dup2(2, 1) < 0) {
    std::fprintf(stderr, "%s: cannot set up its output: %s\n", options.programName.c_str(), std::strerror(errno));
    return 1;
  }
  // A parent killed even by SIGKILL re-parents this process: leave too, even in the middle of
  // a kernel that never returns.
  pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (getppid() != parent) _exit(3);
    }
  }).detach();

  nlohmann::json ready = {{"ready", true}, {"protocol", kProtocolVersion}, {"pid", int(getpid())}};
  ready.update(options.readyExtras);
  writeProtocolLine(protocol, ready.dump());
  MeasureSession session;
  std::string buffer, line;
  while (readProtocolLine(buffer, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::optional<nlohmann::json> request = tryParseJson(line);
    nlohmann::json reply;
    if (!request) {
      reply = {{"id", -1}, {"error_no", int(MeasureErrorNo::UnknownError)},
               {"message", "bad measurement request: not valid JSON"}, {"costs", nlohmann::json::array()}};
    } else if (auto extra = options.extraHandler ? options.extraHandler(*request) : std::nullopt) {
      reply = std::move(*extra);
    } else {
      reply = session.handle(*request);
    }
    writeProtocolLine(protocol, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return 0;
}

}  // namespace tessel::tune::worker
