// Outputs written whole (AtomicFile.h), what a signal cleans up (SignalCleanup.h) and the
// overflow-safe products the memory budgets are checked with (MemoryBudgets.h).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "support/AtomicFile.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/MemoryBudgets.h"
#include "support/SignalCleanup.h"
#include "support/TempDir.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> namesIn(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFile, TheOldFileStaysUntilTheNewOneIsComplete) {
  TempDir dir("tessel-atomic");
  std::string path = dir.path() + "/out.bin";
  writeFile(path, "old");
  ::chmod(path.c_str(), 0640);
  {
    AtomicFile file(path);
    file.write("new, but never committed");
    EXPECT_EQ(readFile(path), "old");
  }
  EXPECT_EQ(readFile(path), "old");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"out.bin"});  // the temporary is gone
  {
    AtomicFile file(path);
    file.write("new");
    file.write(", whole");
    file.commit();
  }
  EXPECT_EQ(readFile(path), "new, whole");
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);  // the replaced file's permissions
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"out.bin"});
  // A path that is a directory is refused before anything is written.
  EXPECT_THROW(AtomicFile(dir.path()), Error);
}

TEST(AtomicDirectory, ReplacesTheOldDirectoryAsAWhole) {
  TempDir dir("tessel-atomic");
  std::string module = dir.path() + "/module";
  fs::create_directories(module);
  writeFile(module + "/old.txt", "old");
  writeFile(module + "/kept.txt", "old");
  {
    AtomicDirectory unfinished(module);
    writeFile(unfinished.staging() + "/new.txt", "new");
  }
  EXPECT_EQ(namesIn(module), (std::vector<std::string>{"kept.txt", "old.txt"}));
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"module"});
  {
    AtomicDirectory replacement(module);
    writeFile(replacement.staging() + "/new.txt", "new");
    replacement.commit();
  }
  EXPECT_EQ(namesIn(module), std::vector<std::string>{"new.txt"});
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"module"});  // the old one is removed
  // A new path, and an empty directory, take it by a plain rename; so does a name like an option.
  for (const std::string name : {"fresh/deeper", "-looks-like-an-option", "slash/"}) {
    AtomicDirectory created(dir.path() + "/" + name);
    writeFile(created.staging() + "/a.txt", "a");
    created.commit();
    EXPECT_EQ(readFile(dir.path() + "/" + name + "/a.txt"), "a");
  }
  EXPECT_EQ(namesIn(dir.path()), (std::vector<std::string>{"-looks-like-an-option", "fresh", "module", "slash"}));
}

// SIGINT and SIGTERM left temporary folders behind. A child process registers one and is ended
// by SIGTERM: the folder is gone, and the child still ends by the signal.
TEST(SignalCleanup, ASignalRemovesTheRegisteredPaths) {
  TempDir dir("tessel-signal");
  std::string folder = dir.path() + "/build", file = dir.path() + "/output.tmp-x";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    installSignalCleanup();
    fs::create_directories(folder + "/deeper");
    writeFile(folder + "/deeper/a.cpp", "int a;", SyncToDisk::kNo);
    writeFile(file, "partial", SyncToDisk::kNo);
    CleanupOnSignal removeFolder = CleanupOnSignal::removing(folder);
    CleanupOnSignal removeFile = CleanupOnSignal::removing(file);
    char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) _exit(2);
    ::pause();
    _exit(3);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::kill(child, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_FALSE(fs::exists(file));
}

// A signal that came after a temporary folder was made and before it was registered left the
// folder behind (a tuning run killed as its build folder appeared, one time in six). Made
// through CleanupOnSignal::creating, a SIGTERM sent from inside the creation, right after the
// folder exists, ends the child only once the folder is registered: it is removed.
TEST(SignalCleanup, ASignalDuringTheCreationStillRemovesWhatWasMade) {
  TempDir dir("tessel-signal");
  std::string folder = dir.path() + "/build";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    installSignalCleanup();
    CleanupOnSignal removeFolder = CleanupOnSignal::creating([&] {
      fs::create_directories(folder + "/deeper");
      ::kill(::getpid(), SIGTERM);
      return folder;
    });
    _exit(3);  // not reached: the signal ends the child once the entry is published
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_FALSE(fs::exists(folder));
  // A creation that throws registers nothing, and the thread's signals are as before.
  EXPECT_THROW(CleanupOnSignal::creating([]() -> std::string { throw Error("no folder"); }), Error);
  sigset_t now;
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, nullptr, &now), 0);
  EXPECT_FALSE(::sigismember(&now, SIGTERM));
}

TEST(MemoryBudgets, ProductsNeverOverflow) {
  EXPECT_EQ(budgets::productWithin({2, 3, 4}, 24), 24);
  EXPECT_EQ(budgets::productWithin({2, 3, 4}, 23), std::nullopt);
  EXPECT_EQ(budgets::productWithin({int64_t(1) << 40, int64_t(1) << 40}, int64_t(1) << 62), std::nullopt);
  EXPECT_EQ(budgets::productWithin({int64_t(1) << 40, int64_t(1) << 40, 0}, 1), 0);  // no element at all
  EXPECT_EQ(budgets::productWithin({-1, 4}, 100), std::nullopt);
  EXPECT_EQ(budgets::productWithin({}, 1), 1);
  EXPECT_EQ(budgets::byteCount(4096), "4096 bytes");
  EXPECT_EQ(budgets::byteCount(uint64_t(1) << 40), "1099511627776 bytes (1.0 TiB)");
}

}  // namespace
