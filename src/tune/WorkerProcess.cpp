#include "tune/WorkerProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "support/Error.h"
#include "support/Subprocess.h"

namespace tessel::tune {

std::string WorkerProcess::Reply::describe(double timeoutSeconds) const {
  switch (status) {
    case Status::Line: return "answered";
    case Status::TimedOut: return fmt::format("timed out after {:.1f} s", timeoutSeconds);
    case Status::Cancelled: return "cancelled";
    case Status::Died:
      if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
      return fmt::format("exited with code {}", exitCode);
  }
  return "unknown";
}

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv, const std::string& stderrPath,
                             const std::vector<std::pair<std::string, std::string>>& environment)
    : stderrPath_(stderrPath) {
  TESSEL_CHECK(!argv.empty(), "worker process: empty command line");
  const std::string& program = argv[0];
  TESSEL_CHECK(access(program.c_str(), X_OK) == 0, "cannot start the measurement worker '{}': {}", program,
               strerror(errno));
  int pair[2];
  TESSEL_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0,
               "cannot create a socket pair for the worker '{}': {}", program, strerror(errno));
  int errFd = open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (errFd < 0) {
    int e = errno;
    close(pair[0]);
    close(pair[1]);
    fail("cannot create the worker's log '{}': {}", stderrPath, strerror(e));
  }
  SpawnOptions spawn;
  spawn.standardInput = spawn.standardOutput = pair[1];
  spawn.standardError = errFd;
  spawn.environment = environment;
  spawn.searchPath = false;
  try {
    killedOnSignal_ = CleanupOnSignal::startingGroup([&] { return pid_ = spawnProcess(argv, spawn); });
  } catch (const Error& e) {
    for (int fd : {pair[0], pair[1], errFd}) close(fd);
    fail("cannot start the measurement worker '{}': {}", program, e.what());
  }
  close(pair[1]);
  close(errFd);
  socket_ = pair[0];
}

WorkerProcess::~WorkerProcess() { kill(); }

bool WorkerProcess::send(const std::string& line) {
  if (pid_ <= 0) return false;
  std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::send(socket_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

WorkerProcess::Reply WorkerProcess::receive(std::chrono::milliseconds timeout) {
  Reply reply;
  if (pid_ <= 0) return reply;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto end = buffer_.find('\n');
    if (end != std::string::npos) {
      reply.status = Reply::Status::Line;
      reply.line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return reply;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      reply.status = Reply::Status::TimedOut;
      return reply;
    }
    pollfd p{socket_, POLLIN, 0};
    int r = poll(&p, 1, int(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // the loop re-checks the deadline
    char chunk[65536];
    ssize_t n = recv(socket_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return reap();
    buffer_.append(chunk, size_t(n));
  }
}

WorkerProcess::Reply WorkerProcess::receive(std::chrono::milliseconds timeout, const std::function<bool()>& cancelled) {
  if (!cancelled) return receive(timeout);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    Reply reply = receive(std::max(std::chrono::milliseconds(0), std::min(left, kCancelPoll)));
    if (reply.status != Reply::Status::TimedOut || left <= kCancelPoll) return reply;
    if (cancelled()) {
      reply.status = Reply::Status::Cancelled;
      return reply;
    }
  }
}

WorkerProcess::Reply WorkerProcess::reap() {
  Reply reply;
  reply.status = Reply::Status::Died;
  if (pid_ <= 0) return reply;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid_, SIGKILL);
  if (WIFSIGNALED(status)) reply.signal = WTERMSIG(status);
  if (WIFEXITED(status)) reply.exitCode = WEXITSTATUS(status);
  close(socket_);
  socket_ = -1;
  pid_ = -1;
  killedOnSignal_ = {};
  buffer_.clear();
  return reply;
}

void WorkerProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  reap();
}

std::string WorkerProcess::stderrTail(size_t bytes) const {
  std::ifstream in(stderrPath_, std::ios::binary);
  if (!in) return "";
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (text.size() > bytes) text = "..." + text.substr(text.size() - bytes);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace tessel::tune
