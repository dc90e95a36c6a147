/// A long-lived child process spoken to in lines: the runner's handle on a measurement worker.
/// The child's stdin and stdout are one end of a socket pair (so writing to a dead child is an
/// error, not a SIGPIPE), its stderr goes to a file, and it leads its own process group, so
/// that killing it also kills anything it started (support's spawnProcess starts it). Every
/// read has a deadline.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/SignalCleanup.h"

namespace tessel::tune {

class WorkerProcess {
 public:
  /// Starts argv[0] (a path) with the arguments. Throws Error naming the program when it cannot
  /// be started (missing, not executable).
  WorkerProcess(const std::vector<std::string>& argv, const std::string& stderrPath,
                const std::vector<std::pair<std::string, std::string>>& environment = {});
  ~WorkerProcess();  ///< kills the child's process group and reaps it
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }

  struct Reply {
    enum class Status { Line, Died, TimedOut, Cancelled };
    Status status = Status::Died;
    std::string line;   ///< without the newline, for Status::Line
    int signal = 0;     ///< for Died: the signal that killed the child, or 0
    int exitCode = -1;  ///< for Died: its exit code when it exited
    /// "killed by signal 11 (Segmentation fault)", "exited with code 2", "timed out after 1.0 s".
    std::string describe(double timeoutSeconds) const;
  };

  /// Sends one line (a newline is added). False when the child is gone.
  bool send(const std::string& line);
  /// Waits for the next line at most `timeout`. On TimedOut the child is still alive (kill() it);
  /// on Died it has been reaped.
  Reply receive(std::chrono::milliseconds timeout);
  /// receive(), asking `cancelled` every kCancelPoll while it waits: when it says true, the
  /// wait ends with Status::Cancelled (the child still alive: kill() it). An empty function
  /// never cancels.
  Reply receive(std::chrono::milliseconds timeout, const std::function<bool()>& cancelled);
  static constexpr std::chrono::milliseconds kCancelPoll{100};
  /// Kills the process group with SIGKILL and reaps the child (idempotent).
  void kill();
  bool running() const { return pid_ > 0; }
  /// The last `bytes` of what the child wrote to stderr, trimmed.
  std::string stderrTail(size_t bytes = 600) const;

 private:
  Reply reap();
  pid_t pid_ = -1;
  int socket_ = -1;
  std::string buffer_;
  std::string stderrPath_;
  CleanupOnSignal killedOnSignal_;  ///< the child's group, killed if a signal ends tessel
};

}  // namespace tessel::tune
