/// Outputs written whole or not at all. A file is written to a temporary file beside it
/// (NAME.tmp-XXXXXX, in the same directory so that the rename stays on one filesystem), synced
/// and renamed over it; a directory (a compiled module) is built in a sibling temporary
/// directory and put in place of the old one in one step. Until then the old file or directory
/// is untouched: a full disk, a failed build or a signal leaves it as it was, and the temporary
/// is removed (also on SIGINT and SIGTERM: SignalCleanup.h).
#pragma once
#include <string>
#include <string_view>

#include "support/SignalCleanup.h"

namespace tessel {

/// Whether a finished file is flushed to the disk before it replaces the old one: a file in a
/// directory that is synced as a whole (AtomicDirectory) or thrown away (TempDir) need not be.
enum class SyncToDisk { kYes, kNo };

class AtomicFile {
 public:
  /// Creates the temporary file beside `path` (a symbolic link's target is what is replaced).
  /// Error naming `path` when its directory does not take new files.
  explicit AtomicFile(const std::string& path, SyncToDisk sync = SyncToDisk::kYes);
  /// Removes the temporary file unless commit() ran.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends to the temporary file; Error naming `path` on failure (no space left, a file size
  /// limit), the old file unchanged.
  void write(std::string_view bytes);
  /// Syncs the temporary file, renames it over `path` and syncs the directory.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_, temporary_;
  const char* unchanged_ = "";  ///< what an error adds when an old file stays as it was
  SyncToDisk sync_;
  int fd_ = -1;
  bool committed_ = false;
  CleanupOnSignal cleanup_;
};

/// A directory replaced as a whole: filled in a staging directory beside it, then put in its
/// place by commit().
class AtomicDirectory {
 public:
  /// Creates the staging directory beside `path` (its parent directories as well). Error naming
  /// `path` when that is not possible.
  explicit AtomicDirectory(const std::string& path);
  /// Removes the staging directory, unfinished, when commit() did not run.
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  /// Where the new contents go (an absolute path).
  const std::string& staging() const { return staging_; }
  /// Syncs the staging directory's files and puts it in place of `path`: renamed to it when
  /// `path` does not exist or is an empty directory, else exchanged with it in one step
  /// (renameat2's RENAME_EXCHANGE; where a filesystem lacks it, two renames), and removes the
  /// old directory.
  void commit();

 private:
  std::string path_, staging_;
  bool committed_ = false;
  CleanupOnSignal cleanup_;
};

}  // namespace tessel
