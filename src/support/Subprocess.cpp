#include "support/Subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "support/Error.h"
#include "support/SignalCleanup.h"

namespace tessel {

std::string SubprocessResult::describe() const {
  if (timedOut) return fmt::format("timed out after {:.1f} s", seconds);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exit code {}", exitCode);
}

pid_t spawnProcess(const std::vector<std::string>& argv, const SpawnOptions& options) {
  TESSEL_CHECK(!argv.empty(), "spawnProcess: empty command line");
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment, built before fork: the child may only call async-signal-safe functions.
  std::vector<std::string> environment;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    bool replaced = false;
    for (const auto& [name, value] : options.environment) replaced |= entry.rfind(name + "=", 0) == 0;
    if (!replaced) environment.push_back(entry);
  }
  for (const auto& [name, value] : options.environment) environment.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  int execPipe[2];
  TESSEL_CHECK(pipe2(execPipe, O_CLOEXEC) == 0, "cannot create a pipe to start '{}': {}", argv[0], strerror(errno));

  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(execPipe[0]);
    close(execPipe[1]);
    fail("cannot fork to run '{}': {}", argv[0], strerror(e));
  }
  if (pid == 0) {
    releaseHeldCleanupSignals();
    setpgid(0, 0);
    if (options.standardInput >= 0) dup2(options.standardInput, 0);
    if (options.standardOutput >= 0) dup2(options.standardOutput, 1);
    if (options.standardError >= 0) dup2(options.standardError, 2);
    if (!options.workingDirectory.empty() && chdir(options.workingDirectory.c_str()) != 0) {
      int e = errno;
      ssize_t ignored = write(execPipe[1], &e, sizeof e);
      (void)ignored;
      _exit(126);
    }
    if (options.searchPath) execvpe(args[0], args.data(), envp.data());
    else execve(args[0], args.data(), envp.data());
    int e = errno;
    ssize_t ignored = write(execPipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);
  close(execPipe[1]);
  int execErrno = 0;
  ssize_t n;
  while ((n = read(execPipe[0], &execErrno, sizeof execErrno)) < 0 && errno == EINTR) {
  }
  close(execPipe[0]);
  if (n == sizeof execErrno) {
    kill(-pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    fail("cannot run '{}': {}", argv[0], strerror(execErrno));
  }
  return pid;
}

SubprocessResult runSubprocess(const std::vector<std::string>& argv, const SubprocessOptions& options) {
  TESSEL_CHECK(!argv.empty(), "runSubprocess: empty command line");
  int outPipe[2], inPipe[2];
  TESSEL_CHECK(pipe2(outPipe, O_CLOEXEC) == 0 && pipe2(inPipe, O_CLOEXEC) == 0, "cannot create pipes for '{}': {}", argv[0],
               strerror(errno));
  auto start = std::chrono::steady_clock::now();
  SpawnOptions spawn;
  spawn.standardInput = inPipe[0];
  spawn.standardOutput = outPipe[1];
  spawn.standardError = outPipe[1];
  spawn.workingDirectory = options.workingDirectory;
  pid_t pid = -1;
  // A signal that ends tessel ends the child's group too (it does not get the terminal's Ctrl-C).
  CleanupOnSignal killedOnSignal;
  try {
    killedOnSignal = CleanupOnSignal::startingGroup([&] { return pid = spawnProcess(argv, spawn); });
  } catch (...) {
    for (int fd : {outPipe[0], outPipe[1], inPipe[0], inPipe[1]}) close(fd);
    throw;
  }
  close(outPipe[1]);
  close(inPipe[0]);
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
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.timedOut) {
    if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace tessel
