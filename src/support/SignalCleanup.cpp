#include "support/SignalCleanup.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

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

void onCleanupSignal(int signal) {
  pid_t self = getpid();
  // The children first: a compiler still writing into a folder would refill it.
  for (CleanupSlot& slot : cleanupSlots)
    if (slot.state.load(std::memory_order_acquire) == CleanupSlot::kLive && slot.owner == self && slot.group > 0)
      kill(-slot.group, SIGKILL);
  for (CleanupSlot& slot : cleanupSlots)
    if (slot.state.load(std::memory_order_acquire) == CleanupSlot::kLive && slot.owner == self && slot.path[0] != 0)
      removePath(slot.path);
  // End as the signal would have: its default action, raised again (blocked until this returns).
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal, &fallback, nullptr);
  raise(signal);
}

/// A free slot filled by `fill`, or -1 when the table is full.
template <typename Fill>
int claimSlot(Fill fill) {
  for (int i = 0; i < kCleanupSlots; ++i) {
    int expected = CleanupSlot::kFree;
    if (!cleanupSlots[i].state.compare_exchange_strong(expected, CleanupSlot::kBusy, std::memory_order_acq_rel)) continue;
    cleanupSlots[i].owner = getpid();
    cleanupSlots[i].group = 0;
    cleanupSlots[i].path[0] = 0;
    fill(cleanupSlots[i]);
    cleanupSlots[i].state.store(CleanupSlot::kLive, std::memory_order_release);
    return i;
  }
  return -1;
}

void releaseSlot(int slot) {
  if (slot >= 0) cleanupSlots[slot].state.store(CleanupSlot::kFree, std::memory_order_release);
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
  std::error_code error;
  std::string absolute = std::filesystem::absolute(path, error).string();
  if (error || absolute.empty() || absolute.size() >= PATH_MAX) return {};
  return CleanupOnSignal(claimSlot([&](CleanupSlot& slot) { std::memcpy(slot.path, absolute.c_str(), absolute.size() + 1); }));
}

CleanupOnSignal CleanupOnSignal::killingGroup(pid_t group) {
  if (group <= 0) return {};
  return CleanupOnSignal(claimSlot([&](CleanupSlot& slot) { slot.group = group; }));
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
