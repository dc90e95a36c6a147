// tessel-device-worker: the measurement worker of a device server. It speaks the protocol of
// tessel-measure-worker (tune/worker/MeasureSession.h: one JSON request per line on stdin, one
// reply per line on stdout) and also times whole modules (ModuleBenchmark.h). Runtime-only,
// so that it cross-compiles for boards. A crash or hang takes only this process down.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "rpc/worker/ModuleBenchmark.h"
#include "tune/MeasureErrorNo.h"
#include "tune/worker/MeasureSession.h"

namespace {

void writeLine(int fd, const std::string& line) {
  std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(2);  // the server is gone
    done += size_t(n);
  }
}

bool readLine(std::string& buffer, std::string& line) {
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

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "usage: %s\nMeasures tessel kernels and modules for a device server: one JSON request per "
                 "line on stdin, one JSON reply per line on stdout (protocol %d).\n",
                 argv[0], tessel::tune::worker::kProtocolVersion);
    return std::strcmp(argv[1], "--help") == 0 ? 0 : 64;
  }
  // Replies get their own copy of stdout; what kernels print goes to stderr.
  int protocol = dup(1);
  if (protocol < 0 || dup2(2, 1) < 0) {
    std::perror("tessel-device-worker: cannot set up its output");
    return 1;
  }
  // Leave when the server dies, even in the middle of a kernel that never returns.
  pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (getppid() != parent) _exit(3);
    }
  }).detach();

  writeLine(protocol, nlohmann::json{{"ready", true}, {"protocol", tessel::tune::worker::kProtocolVersion},
                                     {"pid", int(getpid())}, {"modules", true}}.dump());
  tessel::tune::worker::MeasureSession session;
  std::string buffer, line;
  while (readLine(buffer, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    nlohmann::json reply;
    if (request.is_discarded())
      reply = {{"id", -1}, {"error_no", int(tessel::tune::MeasureErrorNo::UnknownError)},
               {"message", "bad request: not valid JSON"}, {"costs", nlohmann::json::array()}};
    else if (tessel::rpc::worker::isModuleRequest(request))
      reply = tessel::rpc::worker::benchmarkModule(request);
    else
      reply = session.handle(request);
    writeLine(protocol, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return 0;
}
