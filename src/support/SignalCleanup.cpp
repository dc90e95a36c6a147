#include "support/SignalCleanup.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>

namespace tessel {

namespace {

/// One entry of the table the handler reads: a path to remove or a process group to kill.
struct CleanupSlot {
  enum State : int { kFree = 0, kBusy = 1, kLive = 2 };
  std::atomic<int> state{kFree};
  pid_t owner = 0;  ///< the process that registered it
  pid_t group = 0;  ///< a process group to kill, or 0
  char path[PATH_MAX] = {};
};

constexpr int kCleanupSlots = 128;
CleanupSlot cleanupSlots[kCleanupSlots];

/// Directories deeper than this under a registered one are left (tessel's are one or two deep).
constexpr int kMaxRemovalDepth = 16;

/// The record getdents64 fills (the kernel's struct linux_dirent64).
struct DirectoryEntry64 {
  uint64_t inode;
  int64_t offset;
  unsigned short length;
  unsigned char type;
  char name[1];
};

bool isDotOrDotDot(const char* name) { return name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)); }

/// Removes what directory `dir` holds, with system calls only (async-signal-safe). Scans again
/// after a pass that removed something: removing entries while reading may skip others.
void removeDirectoryContents(int dir, int depth) {
  alignas(8) char buffer[1024];
  for (bool removed = true; removed;) {
    removed = false;
    if (lseek(dir, 0, SEEK_SET) != 0) return;
    for (;;) {
      long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const DirectoryEntry64*>(buffer + at);
        at += entry->length;
        if (isDotOrDotDot(entry->name)) continue;
        if (unlinkat(dir, entry->name, 0) == 0) {
          removed = true;
          continue;
        }
        if (errno != EISDIR || depth >= kMaxRemovalDepth) continue;
        int sub = openat(dir, entry->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        removeDirectoryContents(sub, depth + 1);
        close(sub);
        if (unlinkat(dir, entry->name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
  }
}

void removePath(const char* path) {
  if (unlink(path) == 0 || errno != EISDIR) return;
  int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return;
  removeDirectoryContents(dir, 1);
  close(dir);
  rmdir(path);
}

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

/// The cleanup signals held on this thread while it lives (an entry being filled).
class CleanupSignalsHeld {
 public:
  CleanupSignalsHeld() {
    sigset_t held;
    sigemptyset(&held);
    for (int s : kCleanupSignals) sigaddset(&held, s);
    pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~CleanupSignalsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  CleanupSignalsHeld(const CleanupSignalsHeld&) = delete;
  CleanupSignalsHeld& operator=(const CleanupSignalsHeld&) = delete;

 private:
  sigset_t previous_;
};

/// Waits, at most a second, while an entry is being filled: its thread holds the signals, so it
/// is not this one, and it is about to publish what it made. (A child forked while an entry was
/// being filled has a copy that stays busy: the bound.)
void waitForEntriesBeingFilled() {
  timespec start {};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    bool filling = false;
    for (CleanupSlot& slot : cleanupSlots) filling = filling || slot.state.load(std::memory_order_acquire) == CleanupSlot::kBusy;
    if (!filling) return;
    timespec now {};
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= 1) return;
    timespec pause {0, 1000000};
    nanosleep(&pause, nullptr);
  }
}

void onCleanupSignal(int signal) {
  waitForEntriesBeingFilled();
  pid_t self = getpid();
  // The children first: a compiler still writing into a folder would refill it.
  for (CleanupSlot& slot : cleanupSlots)
    if (slot.state.load(std::memory_order_acquire) == CleanupSlot::kLive && slot.owner == self && slot.group > 0)
      kill(-slot.group, SIGKILL);
  // The process's other threads run on while this one cleans (a builder thread writing the next
  // candidate's source into its folder): a path that is back after its removal is removed again,
  // a few times.
  for (CleanupSlot& slot : cleanupSlots)
    if (slot.state.load(std::memory_order_acquire) == CleanupSlot::kLive && slot.owner == self && slot.path[0] != 0)
      for (int attempt = 0; attempt < 20; ++attempt) {
        removePath(slot.path);
        if (access(slot.path, F_OK) != 0) break;
        timespec pause {0, 1000000};
        nanosleep(&pause, nullptr);
      }
  // End as the signal would have: its default action, raised again (blocked until this returns).
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal, &fallback, nullptr);
  raise(signal);
}

/// A free slot, now busy (being filled), or -1 when the table is full. Call with the signals held.
int claimBusySlot() {
  for (int i = 0; i < kCleanupSlots; ++i) {
    int expected = CleanupSlot::kFree;
    if (!cleanupSlots[i].state.compare_exchange_strong(expected, CleanupSlot::kBusy, std::memory_order_acq_rel)) continue;
    cleanupSlots[i].owner = getpid();
    cleanupSlots[i].group = 0;
    cleanupSlots[i].path[0] = 0;
    return i;
  }
  return -1;
}

void releaseSlot(int slot) {
  if (slot >= 0) cleanupSlots[slot].state.store(CleanupSlot::kFree, std::memory_order_release);
}

/// Fills a busy slot with `path` (made absolute) and publishes it; frees it when the path does
/// not fit. Returns the slot, or -1.
int publishPath(int slot, const std::string& path) {
  if (slot < 0) return -1;
  std::error_code error;
  std::string absolute = path.empty() ? "" : std::filesystem::absolute(path, error).string();
  if (error || absolute.empty() || absolute.size() >= PATH_MAX) {
    releaseSlot(slot);
    return -1;
  }
  std::memcpy(cleanupSlots[slot].path, absolute.c_str(), absolute.size() + 1);
  cleanupSlots[slot].state.store(CleanupSlot::kLive, std::memory_order_release);
  return slot;
}

}  // namespace

void installSignalCleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = onCleanupSignal;
    sigemptyset(&action.sa_mask);
    // One cleanup at a time: the other signals wait until it has ended the process.
    for (int s : kCleanupSignals) sigaddset(&action.sa_mask, s);
    for (int s : kCleanupSignals) {
      struct sigaction old {};
      if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      sigaction(s, &action, nullptr);
    }
  });
}

CleanupOnSignal CleanupOnSignal::removing(const std::string& path) {
  CleanupSignalsHeld held;
  return CleanupOnSignal(publishPath(claimBusySlot(), path));
}

CleanupOnSignal CleanupOnSignal::creating(const std::function<std::string()>& create) {
  CleanupSignalsHeld held;
  int slot = claimBusySlot();
  std::string made;
  try {
    made = create();
  } catch (...) {
    releaseSlot(slot);
    throw;
  }
  return CleanupOnSignal(publishPath(slot, made));
}

CleanupOnSignal CleanupOnSignal::startingGroup(const std::function<pid_t()>& start) {
  CleanupSignalsHeld held;
  int slot = claimBusySlot();
  pid_t group = -1;
  try {
    group = start();
  } catch (...) {
    releaseSlot(slot);
    throw;
  }
  if (slot < 0) return {};
  if (group <= 0) {
    releaseSlot(slot);
    return {};
  }
  cleanupSlots[slot].group = group;
  cleanupSlots[slot].state.store(CleanupSlot::kLive, std::memory_order_release);
  return CleanupOnSignal(slot);
}

void releaseHeldCleanupSignals() {
  sigset_t held;
  sigemptyset(&held);
  for (int s : kCleanupSignals) sigaddset(&held, s);
  sigprocmask(SIG_UNBLOCK, &held, nullptr);
}

CleanupOnSignal::~CleanupOnSignal() { releaseSlot(slot_); }

CleanupOnSignal& CleanupOnSignal::operator=(CleanupOnSignal&& other) noexcept {
  if (this != &other) {
    releaseSlot(slot_);
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

}  // namespace tessel
