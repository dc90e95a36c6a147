#include "support/Files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/Error.h"

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

std::string byteCount(uint64_t bytes) {
  if (bytes >= (uint64_t(1) << 30)) return fmt::format("{} bytes ({:.1f} GiB)", bytes, double(bytes) / double(uint64_t(1) << 30));
  if (bytes >= (uint64_t(1) << 20)) return fmt::format("{} bytes ({:.1f} MiB)", bytes, double(bytes) / double(uint64_t(1) << 20));
  return fmt::format("{} bytes", bytes);
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
  TESSEL_CHECK(size <= kind.maxBytes, "cannot read {} {}: it is {}, more than a {} may have ({})", kind.name, path, byteCount(size),
               kind.name, byteCount(kind.maxBytes));
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
                   byteCount(kind.maxBytes));
    }
  }
  return contents;
}

void writeFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  TESSEL_CHECK(out.good(), "cannot write {}: {}", path, std::strerror(errno));
  out << contents;
  out.flush();
  TESSEL_CHECK(out.good(), "cannot write {}: {}", path, std::strerror(errno));
}

void checkWritableFilePath(const std::string& path, const std::string& what) {
  TESSEL_CHECK(!path.empty(), "{}: the path is empty", what);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    std::string special = specialFileKind(info.st_mode);
    TESSEL_CHECK(special.empty(), "{} {}: it is {}", what, path, special);
    TESSEL_CHECK(::access(path.c_str(), W_OK) == 0, "{} {}: cannot write it: {}", what, path, std::strerror(errno));
    return;
  }
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  TESSEL_CHECK(::stat(parent.c_str(), &info) == 0, "{} {}: its directory {} does not exist", what, path, parent.string());
  TESSEL_CHECK(S_ISDIR(info.st_mode), "{} {}: {} is not a directory", what, path, parent.string());
  TESSEL_CHECK(::access(parent.c_str(), W_OK | X_OK) == 0, "{} {}: cannot create files in {}: {}", what, path, parent.string(),
               std::strerror(errno));
}

void prepareOutputDirectory(const std::string& path, const std::string& what) {
  TESSEL_CHECK(!path.empty(), "{}: the path is empty", what);
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    TESSEL_CHECK(S_ISDIR(info.st_mode), "{} {}: it exists and is not a directory", what, path);
  } else {
    // Walk up to the first part that exists: it must be a directory we may write into.
    std::filesystem::path existing = std::filesystem::path(path).parent_path();
    while (!existing.empty() && ::stat(existing.c_str(), &info) != 0) existing = existing.parent_path();
    if (existing.empty()) existing = ".";
    TESSEL_CHECK(::stat(existing.c_str(), &info) == 0 && S_ISDIR(info.st_mode), "{} {}: {} is not a directory", what, path,
                 existing.string());
    std::error_code error;
    std::filesystem::create_directories(path, error);
    TESSEL_CHECK(!error, "{} {}: cannot create it: {}", what, path, error.message());
  }
  TESSEL_CHECK(::access(path.c_str(), W_OK | X_OK) == 0, "{} {}: cannot write into it: {}", what, path, std::strerror(errno));
  // /proc and /sys accept mkdir-less paths but not files; a probe file tells before any work.
  std::string probe = (std::filesystem::path(path) / ".tessel-write-probe").string();
  std::ofstream out(probe);
  bool writable = out.good();
  out.close();
  std::error_code ignored;
  std::filesystem::remove(probe, ignored);
  TESSEL_CHECK(writable, "{} {}: cannot create files in it", what, path);
}

}  // namespace tessel
