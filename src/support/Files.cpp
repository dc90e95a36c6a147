#include "support/Files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/AtomicFile.h"
#include "support/Error.h"
#include "support/MemoryBudgets.h"

namespace tessel {

namespace {

/// "a directory", "a character device", ... for st_mode; empty for a regular file.
std::string specialFileKind(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device, not a regular file";
  if (S_ISBLK(mode)) return "a block device, not a regular file";
  if (S_ISFIFO(mode)) return "a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "a socket, not a regular file";
  return "not a regular file";
}

}  // namespace

uint64_t checkReadableFile(const std::string& path, const FileKind& kind) {
  TESSEL_CHECK(!path.empty(), "cannot read {}: the path is empty", kind.name);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    int error = errno;
    fail("cannot read {} {}: {}", kind.name, path, error == ENOENT ? "no such file" : std::strerror(error));
  }
  std::string special = specialFileKind(info.st_mode);
  TESSEL_CHECK(special.empty(), "cannot read {} {}: it is {}", kind.name, path, special);
  uint64_t size = uint64_t(info.st_size);
  TESSEL_CHECK(size <= kind.maxBytes, "cannot read {} {}: it is {}, more than a {} may have ({})", kind.name, path, budgets::byteCount(size),
               kind.name, budgets::byteCount(kind.maxBytes));
  return size;
}

std::string readFile(const std::string& path, const FileKind& kind) {
  uint64_t size = checkReadableFile(path, kind);
  std::ifstream in(path, std::ios::binary);
  TESSEL_CHECK(in.good(), "cannot read {} {}: {}", kind.name, path, std::strerror(errno));
  // Read what stat promised, and at most one byte more: a file that grows while it is read
  // (or a /proc file that claims size 0) is cut at the limit instead of read forever.
  std::string contents;
  contents.resize(size_t(size));
  in.read(contents.data(), std::streamsize(size));
  contents.resize(size_t(in.gcount()));
  TESSEL_CHECK(!in.bad(), "cannot read {} {}: {}", kind.name, path, std::strerror(errno));
  if (in.good()) {
    char probe[4096];
    while (in.read(probe, sizeof probe) || in.gcount() > 0) {
      contents.append(probe, size_t(in.gcount()));
      TESSEL_CHECK(contents.size() <= kind.maxBytes, "cannot read {} {}: it grew past {} while it was read", kind.name, path,
                   budgets::byteCount(kind.maxBytes));
    }
  }
  return contents;
}

void writeFile(const std::string& path, std::string_view contents, SyncToDisk sync) {
  AtomicFile file(path, sync);
  file.write(contents);
  file.commit();
}

namespace {

/// Checks that the directory of `path` exists and takes new files.
void checkDirectoryTakesFiles(const std::string& path, const std::string& what) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  struct stat info {};
  TESSEL_CHECK(::stat(parent.c_str(), &info) == 0, "{} {}: its directory {} does not exist", what, path, parent.string());
  TESSEL_CHECK(S_ISDIR(info.st_mode), "{} {}: {} is not a directory", what, path, parent.string());
  TESSEL_CHECK(::access(parent.c_str(), W_OK | X_OK) == 0, "{} {}: cannot create files in {}: {}", what, path, parent.string(),
               std::strerror(errno));
}

}  // namespace

void checkWritableFilePath(const std::string& path, const std::string& what) {
  TESSEL_CHECK(!path.empty(), "{}: the path is empty", what);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    std::string special = specialFileKind(info.st_mode);
    TESSEL_CHECK(special.empty(), "{} {}: it is {}", what, path, special);
    TESSEL_CHECK(::access(path.c_str(), W_OK) == 0, "{} {}: cannot write it: {}", what, path, std::strerror(errno));
    return;
  }
  checkDirectoryTakesFiles(path, what);
}

void checkOutputFile(const std::string& path, bool force, const std::string& what) {
  checkWritableFilePath(path, what);
  struct stat info {};
  TESSEL_CHECK(force || ::lstat(path.c_str(), &info) != 0, "{} {}: the file exists; pass --force to replace it", what, path);
  // A replacement is a new file renamed over the old one.
  checkDirectoryTakesFiles(path, what);
}

void checkOutputDirectory(const std::string& path, const std::string& marker, const std::string& what) {
  TESSEL_CHECK(!path.empty(), "{}: the path is empty", what);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    TESSEL_CHECK(S_ISDIR(info.st_mode), "{} {}: it exists and is not a directory", what, path);
    std::error_code error;
    bool empty = std::filesystem::is_empty(path, error);
    TESSEL_CHECK(!error, "{} {}: cannot read it: {}", what, path, error.message());
    TESSEL_CHECK(empty || std::filesystem::exists(std::filesystem::path(path) / marker, error),
                 "{} {}: the directory exists and holds no {}, so it is not a module tessel wrote; a module is replaced as a "
                 "whole: name a new or empty directory",
                 what, path, marker);
  } else {
    // Walk up to the first part that exists: it must be a directory.
    std::filesystem::path existing = std::filesystem::path(path).parent_path();
    while (!existing.empty() && ::stat(existing.c_str(), &info) != 0) existing = existing.parent_path();
    if (existing.empty()) existing = ".";
    TESSEL_CHECK(::stat(existing.c_str(), &info) == 0 && S_ISDIR(info.st_mode), "{} {}: {} is not a directory", what, path,
                 existing.string());
  }
  // The module is built beside it and renamed into place: a directory created there (and removed)
  // proves both, also where a filesystem takes mkdir-less paths but no entries (/proc).
  try {
    AtomicDirectory probe(path);
  } catch (const Error& e) {
    throw e.withContext(what + " " + path);
  }
}

}  // namespace tessel
