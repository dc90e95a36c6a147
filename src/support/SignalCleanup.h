/// What tessel leaves behind when SIGINT, SIGTERM or SIGHUP ends it: nothing. Temporary files
/// and directories (a build's folder, a module being written, a file about to replace another)
/// register here while they exist, and so do the process groups of the programs tessel starts
/// (the compiler, a measurement worker); the signal's handler removes the paths and kills the
/// groups, then ends the process with the signal as before, so a shell still sees "killed by
/// SIGINT". The handler uses only async-signal-safe calls on a fixed table filled beforehand;
/// an entry is filled with the signals held on its thread, and the handler waits for entries
/// being filled.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>

namespace tessel {

/// Installs the handlers, once per process (the `tessel` command calls it first thing). A signal
/// that is ignored when it is called (a background job's SIGINT) stays ignored. Only the process
/// that registered an entry acts on it: a forked child that receives a signal removes nothing of
/// its parent's.
void installSignalCleanup();

/// In a child forked by CleanupOnSignal::startingGroup's `start`: lets the cleanup signals
/// through again (async-signal-safe; harmless where they were not held).
void releaseHeldCleanupSignals();

/// An entry of the table, removed from it when this goes away (move it to keep it).
class CleanupOnSignal {
 public:
  CleanupOnSignal() = default;
  /// `path` (a file, or a directory with its contents; made absolute here) is removed if a
  /// signal ends the process. Best effort: with more than a hundred entries at once, or a path
  /// of PATH_MAX bytes and more, nothing is registered (the normal removal still happens).
  static CleanupOnSignal removing(const std::string& path);
  /// Makes a file or directory and registers it in one step, so that a signal between the two
  /// still removes it: `create` makes it and returns its path ("" when it made nothing). The
  /// signals wait on this thread while it runs, and a handler running meanwhile on another
  /// thread waits for it (a tuning run killed just after its build folder appeared left that
  /// folder behind, about one time in six). If `create` throws, nothing is registered.
  static CleanupOnSignal creating(const std::function<std::string()>& create);
  /// Starts a child as its own group's leader and registers the group, to be killed with SIGKILL
  /// if a signal ends the process, in one step: `start` forks and returns the child's id (or
  /// throws). Drop the entry once the child is reaped, before its id is reused. The signals wait meanwhile, so a signal that comes
  /// while the child starts still kills it; the child begins with them held and calls
  /// releaseHeldCleanupSignals() first.
  static CleanupOnSignal startingGroup(const std::function<pid_t()>& start);

  ~CleanupOnSignal();
  CleanupOnSignal(CleanupOnSignal&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  CleanupOnSignal& operator=(CleanupOnSignal&& other) noexcept;
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;

 private:
  explicit CleanupOnSignal(int slot) : slot_(slot) {}
  int slot_ = -1;
};

}  // namespace tessel
