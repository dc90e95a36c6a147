/// Runs a function in a forked child process with a deadline, so that a crash (SIGSEGV, abort)
/// or a hang in it cannot take the caller down. The child sends back the string the function
/// returns, or the message of the exception it throws. Used by the builder to isolate the
/// lowering and code generation of each candidate.
///
/// The function runs in a copy of the caller's memory with only the forking thread alive: it
/// must not rely on other threads of the caller (thread pools, OpenMP teams).
#pragma once
#include <chrono>
#include <functional>
#include <string>

namespace tessel::tune {

struct IsolatedCallResult {
  enum class Status {
    Returned,  ///< `output` holds the returned string
    Threw,     ///< `output` holds the exception's message
    Crashed,   ///< the child died without an answer (`signal` or `exitCode` say how)
    TimedOut,  ///< the child ran past the deadline and was killed with its process group
  };
  Status status = Status::Crashed;
  std::string output;
  int signal = 0;
  int exitCode = 0;
  double seconds = 0;
  /// "killed by signal 11 (Segmentation fault)", "exited with code 3 without an answer",
  /// "timed out after 1.0 s".
  std::string describe() const;
};

/// Forks, runs `body` in the child and waits at most `timeout` (0 = no limit). Throws Error only
/// when the child cannot be created.
IsolatedCallResult runIsolated(const std::function<std::string()>& body, std::chrono::milliseconds timeout);

}  // namespace tessel::tune
