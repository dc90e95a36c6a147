/// Runs an external program (the C compiler, a measurement worker) with a wall-clock timeout,
/// capturing its combined output. A timeout kills the whole process group, so a hung child
/// never hangs tessel.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace tessel {

struct SubprocessResult {
  int exitCode = -1;       ///< exit status when the program exited normally
  int signal = 0;          ///< the signal that killed it, 0 if none
  bool timedOut = false;   ///< killed because it ran past the timeout
  std::string output;      ///< stdout and stderr, interleaved
  double seconds = 0;      ///< wall time
  bool ok() const { return !timedOut && signal == 0 && exitCode == 0; }
  /// "exit code 1", "killed by signal 11 (Segmentation fault)", "timed out after 2.0 s".
  std::string describe() const;
};

struct SubprocessOptions {
  std::chrono::milliseconds timeout{0};  ///< 0 = no limit
  std::string workingDirectory;           ///< empty = inherit
  std::string standardInput;              ///< written to the child's stdin, then closed
};

/// Runs argv[0] (searched in PATH) with the arguments; never throws for a failing child,
/// only when the program cannot be started at all.
SubprocessResult runSubprocess(const std::vector<std::string>& argv, const SubprocessOptions& options = {});

/// How spawnProcess connects a child.
struct SpawnOptions {
  int standardInput = -1, standardOutput = -1, standardError = -1;  ///< dup2'ed in the child; -1: inherited
  std::string workingDirectory;                                      ///< empty: inherited
  std::vector<std::pair<std::string, std::string>> environment;     ///< set (or replaced) in the child's environment
  bool searchPath = true;                                            ///< look argv[0] up in PATH (else a path)
};

/// The one fork/exec of tessel: starts argv as the leader of a new process group (so that
/// killing the group kills whatever the child starts) and returns its pid. Throws Error naming
/// the program when it cannot start: a failed exec is reported back through a close-on-exec
/// pipe, so a missing program is an error here, never an exit code to guess at. Everything the
/// child needs is prepared before fork (the parent may have threads).
pid_t spawnProcess(const std::vector<std::string>& argv, const SpawnOptions& options);

}  // namespace tessel
