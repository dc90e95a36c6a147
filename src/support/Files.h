/// Whole-file reading and writing with the checks a reader of user input needs. Before a byte
/// is read, a path that is a directory, a device (/dev/urandom never ends), a FIFO or a socket
/// is refused, and so is a file larger than what the reader expects of its kind: every
/// message names the path and what it is.
#pragma once
#include <cstdint>
#include <string>

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

/// Writes a whole file (replacing it); throws Error naming the path when it cannot.
void writeFile(const std::string& path, const std::string& contents);

/// Checks before any work that `path` can become a new file or replace a regular one: its
/// directory exists and is a directory, and `path` is not a directory, a device or another
/// special file. `what` names it in messages ("--output", "params file").
void checkWritableFilePath(const std::string& path, const std::string& what);

/// Checks before any work that `path` can be (or already is) a directory that tessel writes
/// into: it is not a file, and its parent exists or can be created. Creates it.
void prepareOutputDirectory(const std::string& path, const std::string& what);

}  // namespace tessel
