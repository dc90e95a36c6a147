#include "support/AtomicFile.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "support/Error.h"

namespace fs = std::filesystem;

namespace tessel {

namespace {

/// The path an output replaces: absolute (a name that starts with '-' reaches no program as an
/// option), and a symbolic link's target rather than the link.
std::string replacedPath(const std::string& path) {
  TESSEL_CHECK(!path.empty(), "cannot write an output: the path is empty");
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  TESSEL_CHECK(!error, "cannot write {}: {}", path, error.message());
  // "out/" and "out/." name the directory out: the temporary goes beside it, not into it.
  absolute = absolute.lexically_normal();
  if (!absolute.has_filename() && absolute.has_relative_path()) absolute = absolute.parent_path();
  if (fs::is_symlink(absolute, error)) {
    fs::path target = fs::weakly_canonical(absolute, error);
    if (!error) return target.string();
  }
  return absolute.string();
}

/// "NAME.tmp-" and six random letters and digits.
std::string temporaryName(const std::string& path) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 random(std::random_device{}() ^ uint64_t(::getpid()));
  std::string name = path + ".tmp-";
  for (int i = 0; i < 6; ++i) name += kLetters[random() % (sizeof kLetters - 1)];
  return name;
}

/// Creates a new temporary entry (`what`) beside `path` with `create` (open with O_EXCL, mkdir),
/// trying other names while one exists; returns its name.
template <typename Create>
std::string createBeside(const std::string& path, const char* what, Create create) {
  for (int attempt = 0;; ++attempt) {
    std::string name = temporaryName(path);
    if (create(name)) return name;
    int error = errno;
    if (error != EEXIST || attempt >= 100)
      fail("cannot write {}: cannot create {} in {}: {}", path, what, fs::path(path).parent_path().string(), std::strerror(error));
  }
}

/// fsync of a directory, so that a rename in it survives a crash; errors are ignored (some
/// filesystems refuse to sync a directory, and the rename has happened).
void syncDirectory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void syncFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  int result = ::fsync(fd), error = errno;
  ::close(fd);
  TESSEL_CHECK(result == 0, "cannot write {}: fsync failed: {}", path, std::strerror(error));
}

}  // namespace

// ---- files ----------------------------------------------------------------------------------

AtomicFile::AtomicFile(const std::string& path, SyncToDisk sync) : path_(replacedPath(path)), sync_(sync) {
  struct stat existing {};
  bool replacing = ::stat(path_.c_str(), &existing) == 0;
  TESSEL_CHECK(!replacing || S_ISREG(existing.st_mode), "cannot write {}: it exists and is not a regular file", path);
  cleanup_ = CleanupOnSignal::creating([&] {
    temporary_ = createBeside(path_, "a temporary file", [&](const std::string& name) {
      fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      return fd_ >= 0;
    });
    return temporary_;
  });
  // The replacement keeps the permissions of the file it replaces; a new file gets the umask's.
  if (replacing) ::fchmod(fd_, existing.st_mode & 07777);
  unchanged_ = replacing ? "; the file is unchanged" : "";
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
}

void AtomicFile::write(std::string_view bytes) {
  TESSEL_CHECK(fd_ >= 0 && !committed_, "cannot write {}: the file is already complete", path_);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    // EFBIG past a file size limit (SIGXFSZ is ignored by the tessel command), ENOSPC on a full disk.
    TESSEL_CHECK(n > 0, "cannot write {}: {} (after {} of {} bytes{})", path_, std::strerror(n < 0 ? errno : ENOSPC), done,
                 bytes.size(), unchanged_);
    done += size_t(n);
  }
}

void AtomicFile::commit() {
  TESSEL_CHECK(fd_ >= 0 && !committed_, "cannot write {}: the file is already complete", path_);
  if (sync_ == SyncToDisk::kYes && ::fsync(fd_) != 0)
    fail("cannot write {}: fsync failed: {}{}", path_, std::strerror(errno), unchanged_);
  int closed = ::close(fd_), error = errno;
  fd_ = -1;
  TESSEL_CHECK(closed == 0, "cannot write {}: {}{}", path_, std::strerror(error), unchanged_);
  TESSEL_CHECK(::rename(temporary_.c_str(), path_.c_str()) == 0, "cannot write {}: {}{}", path_, std::strerror(errno), unchanged_);
  committed_ = true;
  if (sync_ == SyncToDisk::kYes) syncDirectory(fs::path(path_).parent_path().string());
}

// ---- directories ----------------------------------------------------------------------------

AtomicDirectory::AtomicDirectory(const std::string& path) : path_(replacedPath(path)) {
  struct stat existing {};
  TESSEL_CHECK(::stat(path_.c_str(), &existing) != 0 || S_ISDIR(existing.st_mode), "cannot write {}: it exists and is not a directory",
               path);
  std::error_code error;
  fs::create_directories(fs::path(path_).parent_path(), error);
  TESSEL_CHECK(!error, "cannot write {}: cannot create its parent directory: {}", path, error.message());
  cleanup_ = CleanupOnSignal::creating([&] {
    staging_ = createBeside(path_, "a directory", [](const std::string& name) { return ::mkdir(name.c_str(), 0777) == 0; });
    return staging_;
  });
}

AtomicDirectory::~AtomicDirectory() {
  std::error_code ignored;
  if (!committed_) fs::remove_all(staging_, ignored);
}

void AtomicDirectory::commit() {
  TESSEL_CHECK(!committed_, "cannot write {}: the directory is already in place", path_);
  std::error_code error;
  for (const auto& entry : fs::recursive_directory_iterator(staging_, error))
    if (entry.is_regular_file(error)) syncFile(entry.path().string());
  TESSEL_CHECK(!error, "cannot write {}: {}", path_, error.message());
  syncDirectory(staging_);
  // A new name, or an empty directory, is replaced by a plain rename.
  if (::rename(staging_.c_str(), path_.c_str()) != 0) {
    int renameError = errno;
    TESSEL_CHECK(renameError == ENOTEMPTY || renameError == EEXIST, "cannot write {}: {}", path_, std::strerror(renameError));
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0) {
      int exchangeError = errno;
      TESSEL_CHECK(exchangeError == EINVAL || exchangeError == ENOSYS, "cannot write {}: {}", path_, std::strerror(exchangeError));
      // No exchange on this filesystem: the old directory moves aside, the new one in its place.
      std::string aside = createBeside(path_, "a directory", [&](const std::string& name) {
        if (::rename(path_.c_str(), name.c_str()) == 0) return true;
        if (errno == ENOTEMPTY) errno = EEXIST;  // the name is taken: another one
        return false;
      });
      if (::rename(staging_.c_str(), path_.c_str()) != 0) {
        int error = errno;
        ::rename(aside.c_str(), path_.c_str());
        fail("cannot write {}: {} (the old directory is unchanged)", path_, std::strerror(error));
      }
      // Registered only now: a signal before this leaves the old directory aside, not deleted
      // while the new one is not yet in its place.
      staging_ = aside;
      cleanup_ = CleanupOnSignal::removing(staging_);
    }
  }
  committed_ = true;
  syncDirectory(fs::path(path_).parent_path().string());
  // The old directory, now at the staging name (or nothing, after a plain rename).
  fs::remove_all(staging_, error);
}

}  // namespace tessel
