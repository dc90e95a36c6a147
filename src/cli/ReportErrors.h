/// The one error path of the `tessel` command: whatever a subcommand throws ends here as one
/// `error: ...` line on stderr and exit code 1, never as an abort. main() catches everything
/// around parsing (CLI11 runs the subcommands' callbacks inside parse) and calls this.
#pragma once

namespace tessel::cli {

/// Exit code of a command that failed with an error of its own (bad input, a failed step).
inline constexpr int kExitError = 1;
/// Exit code of a command line that cannot be run as written (an unknown option, a value out
/// of its range).
inline constexpr int kExitUsage = 2;

/// Prints the exception in flight (call only inside a catch block) and returns the exit code.
/// A tessel Error is printed as it is: its message already names the problem and the place.
/// Exceptions from libraries (std::filesystem, JSON, allocation) are translated into the same
/// form; only an exception nobody could name is reported as an internal error.
int reportCurrentException();

}  // namespace tessel::cli
