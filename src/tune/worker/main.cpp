// tessel-measure-worker: a long-lived process that measures candidate kernels for a runner,
// one JSON request per line on stdin, one JSON reply per line on stdout (MeasureSession.h has
// the protocol). Linked against the runtime library only. A candidate that crashes or hangs
// takes only this process down; the runner starts a new one.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "tune/MeasureErrorNo.h"
#include "tune/worker/MeasureSession.h"

namespace {

/// Writes one line to the protocol stream; exits when the runner is gone.
void writeLine(int fd, const std::string& line) {
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
    std::fprintf(stderr,
                 "usage: %s\nMeasures tessel kernels: reads one JSON request per line on stdin and writes one JSON "
                 "reply per line on stdout (protocol %d).\n",
                 argv[0], tessel::tune::worker::kProtocolVersion);
    return std::strcmp(argv[1], "--help") == 0 ? 0 : 64;
  }
  // The protocol gets its own copy of stdout; stdout itself goes to stderr, so a kernel that
  // prints cannot corrupt the replies.
  int protocol = dup(1);
  if (protocol < 0 || dup2(2, 1) < 0) {
    std::perror("tessel-measure-worker: cannot set up its output");
    return 1;
  }
  // When the runner dies (even by SIGKILL) this process is re-parented: leave too, even in the
  // middle of a kernel that never returns.
  pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (getppid() != parent) _exit(3);
    }
  }).detach();

  writeLine(protocol, nlohmann::json{{"ready", true}, {"protocol", tessel::tune::worker::kProtocolVersion},
                                     {"pid", int(getpid())}}.dump());
  tessel::tune::worker::MeasureSession session;
  std::string buffer, line;
  while (readLine(buffer, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    nlohmann::json reply;
    if (request.is_discarded()) {
      reply = {{"id", -1}, {"error_no", int(tessel::tune::MeasureErrorNo::UnknownError)}, {"message", "bad measurement request: not valid JSON"}, {"costs", nlohmann::json::array()}};
    } else {
      reply = session.handle(request);
    }
    writeLine(protocol, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return 0;
}
