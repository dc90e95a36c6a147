#include "support/Subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "support/Error.h"

namespace tessel {

std::string SubprocessResult::describe() const {
  if (timedOut) return fmt::format("timed out after {:.1f} s", seconds);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit code {}", exitCode);
}

SubprocessResult runSubprocess(const std::vector<std::string>& argv, const SubprocessOptions& options) {
  TESSEL_CHECK(!argv.empty(), "runSubprocess: empty command line");
  int outPipe[2], inPipe[2], errPipe[2];
  TESSEL_CHECK(pipe2(outPipe, O_CLOEXEC) == 0 && pipe2(inPipe, O_CLOEXEC) == 0 && pipe2(errPipe, O_CLOEXEC) == 0,
               "cannot create pipes for '{}': {}", argv[0], strerror(errno));
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  TESSEL_CHECK(pid >= 0, "cannot fork to run '{}': {}", argv[0], strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    dup2(inPipe[0], 0);
    dup2(outPipe[1], 1);
    dup2(outPipe[1], 2);
    if (!options.workingDirectory.empty() && chdir(options.workingDirectory.c_str()) != 0) _exit(126);
    execvp(args[0], args.data());
    // Report exec failure through the dedicated pipe so the parent can tell it from an exit code.
    int e = errno;
    ssize_t ignored = write(errPipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);
  close(outPipe[1]);
  close(inPipe[0]);
  close(errPipe[1]);
  if (!options.standardInput.empty()) {
    ssize_t ignored = write(inPipe[1], options.standardInput.data(), options.standardInput.size());
    (void)ignored;
  }
  close(inPipe[1]);

  SubprocessResult result;
  char buffer[8192];
  bool open = true;
  while (open) {
    int waitMs = -1;
    if (options.timeout.count() > 0) {
      auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      waitMs = int(std::max<int64_t>(0, options.timeout.count() - elapsed.count()));
      if (waitMs == 0) {
        result.timedOut = true;
        kill(-pid, SIGKILL);
        break;
      }
    }
    pollfd p{outPipe[0], POLLIN, 0};
    int r = poll(&p, 1, waitMs);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // loop re-checks the deadline
    ssize_t n = read(outPipe[0], buffer, sizeof buffer);
    if (n > 0) {
      if (result.output.size() < (8u << 20)) result.output.append(buffer, size_t(n));
    } else if (n == 0 || errno != EINTR) {
      open = false;
    }
  }
  close(outPipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Reap anything the child left behind in its group.
  kill(-pid, SIGKILL);
  int execErrno = 0;
  bool execFailed = read(errPipe[0], &execErrno, sizeof execErrno) == sizeof execErrno;
  close(errPipe[0]);
  TESSEL_CHECK(!execFailed, "cannot run '{}': {}", argv[0], strerror(execErrno));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.timedOut) {
    if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace tessel
