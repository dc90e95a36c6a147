/// Whole-file reading and writing with the checks a reader of user input needs. Before a byte
/// is read, a path that is a directory, a device (/dev/urandom never ends), a FIFO or a socket
/// is refused, and so is a file larger than what the reader expects of its kind: every
/// message names the path and what it is.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "support/AtomicFile.h"

namespace tessel {

/// What a reader expects: the kind of file (for messages: "records log", "params file") and
/// the most bytes such a file may sensibly have.
struct FileKind {
  const char* name = "file";
  uint64_t maxBytes = uint64_t(256) << 20;
};

/// Common kinds, one place for their limits.
namespace file_kinds {
inline constexpr FileKind kJson{"JSON file", uint64_t(256) << 20};
inline constexpr FileKind kParams{"params file", uint64_t(64) << 30};
inline constexpr FileKind kTensor{".npy file", uint64_t(64) << 30};
inline constexpr FileKind kGraphPlan{"graph plan", uint64_t(256) << 20};
inline constexpr FileKind kVtaProgram{"VTA program", uint64_t(1) << 30};
inline constexpr FileKind kVtaConfig{"VTA configuration", uint64_t(1) << 20};
inline constexpr FileKind kStepList{"step list", uint64_t(64) << 20};
inline constexpr FileKind kSharedLibrary{"shared library", uint64_t(4) << 30};
}  // namespace file_kinds

/// Checks that `path` names a regular file of at most kind.maxBytes and returns its size.
/// Errors: "cannot read <kind> <path>: no such file", "...: it is a directory", "...: it is a
/// character device, not a regular file", "...: it is N bytes, more than a <kind> may have (M)".
uint64_t checkReadableFile(const std::string& path, const FileKind& kind = {});

/// Reads a whole file after checkReadableFile; throws Error naming the path when it cannot.
std::string readFile(const std::string& path, const FileKind& kind = {});

/// Writes a whole file, or nothing: to a temporary file beside it, synced (unless `sync` says
/// the caller syncs or discards its directory as a whole) and renamed over it (AtomicFile.h).
/// Throws Error naming the path when it cannot; an existing file is then unchanged.
void writeFile(const std::string& path, std::string_view contents, SyncToDisk sync = SyncToDisk::kYes);

/// Checks before any work that `path` can become a new file or be written: its directory exists
/// and is a directory, and `path` is not a directory, a device or another special file. `what`
/// names it in messages ("--output", "--log").
void checkWritableFilePath(const std::string& path, const std::string& what);

/// The rule of every command that writes a file the user names (`run --output`, `params -o`,
/// `records best -o`): checkWritableFilePath, an existing file is replaced only when `force` is
/// given ("--output PATH: the file exists; pass --force to replace it"), and its directory takes
/// new files (the replacement is renamed over it).
void checkOutputFile(const std::string& path, bool force, const std::string& what = "--output");

/// Checks before any work that `path` can become a directory tessel writes as a whole (a module,
/// AtomicDirectory): it does not exist, or is an empty directory, or a directory holding `marker`
/// (a module's graph.json), which is replaced. A directory with other contents may hold the
/// user's own files and is refused; so is a file, and a place where no directory can be created
/// (tried by creating one beside `path`; its missing parents are created).
void checkOutputDirectory(const std::string& path, const std::string& marker, const std::string& what);

}  // namespace tessel
