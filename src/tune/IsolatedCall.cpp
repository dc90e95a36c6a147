#include "tune/IsolatedCall.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <exception>

#include "support/Error.h"
#include "support/SignalCleanup.h"

namespace tessel::tune {

namespace {

/// Writes all of `data` to `fd`, retrying short writes; gives up silently on an error (the
/// parent then sees a child without an answer).
void writeAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += size_t(n);
  }
}

/// The child's side: run the body, send 'R' or 'E' followed by the text, exit without running
/// the parent's atexit handlers or static destructors.
[[noreturn]] void runChild(int fd, const std::function<std::string()>& body) {
  std::string message;
  try {
    message = "R" + body();
  } catch (const std::exception& e) {
    message = std::string("E") + e.what();
  } catch (...) {
    message = "Ean exception that is not a std::exception";
  }
  writeAll(fd, message);
  close(fd);
  _exit(0);
}

}  // namespace

std::string IsolatedCallResult::describe() const {
  switch (status) {
    case Status::Returned: return "returned";
    case Status::Threw: return "threw: " + output;
    case Status::TimedOut: return fmt::format("timed out after {:.1f} s", seconds);
    case Status::Crashed:
      if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
      return fmt::format("exited with code {} without an answer", exitCode);
  }
  return "unknown";
}

IsolatedCallResult runIsolated(const std::function<std::string()>& body, std::chrono::milliseconds timeout) {
  int fds[2];
  TESSEL_CHECK(pipe2(fds, O_CLOEXEC) == 0, "isolated call: cannot create a pipe: {}", strerror(errno));
  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  CleanupOnSignal killedOnSignal = CleanupOnSignal::startingGroup([&] {
    pid = fork();
    if (pid < 0) {
      int e = errno;
      close(fds[0]);
      close(fds[1]);
      fail("isolated call: cannot fork: {}", strerror(e));
    }
    if (pid == 0) {
      releaseHeldCleanupSignals();
      setpgid(0, 0);
      close(fds[0]);
      runChild(fds[1], body);
    }
    setpgid(pid, pid);
    return pid;
  });
  close(fds[1]);

  IsolatedCallResult result;
  std::string received;
  char buffer[65536];
  bool timedOut = false;
  for (;;) {
    int waitMs = -1;
    if (timeout.count() > 0) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      waitMs = int(std::max<int64_t>(0, timeout.count() - elapsed.count()));
      if (waitMs == 0) {
        timedOut = true;
        break;
      }
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = poll(&p, 1, waitMs);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // the loop re-checks the deadline
    ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) received.append(buffer, size_t(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  if (timedOut) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-pid, SIGKILL);  // anything the body started in the child's group
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (timedOut) {
    result.status = IsolatedCallResult::Status::TimedOut;
    return result;
  }
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (clean && !received.empty() && (received[0] == 'R' || received[0] == 'E')) {
    result.status = received[0] == 'R' ? IsolatedCallResult::Status::Returned : IsolatedCallResult::Status::Threw;
    result.output = received.substr(1);
  } else {
    result.status = IsolatedCallResult::Status::Crashed;
  }
  return result;
}

}  // namespace tessel::tune
