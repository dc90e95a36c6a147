// What `tessel` writes (issue 39): every output whole or not at all, an existing file replaced
// only with --force, a module directory replaced as a whole once the new one is complete, a
// path never read as an option by the compiler, and nothing left behind by SIGTERM. A full disk
// is played by a file size limit (bash's ulimit -f), under which every write past the limit
// fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include "common/OnnxModels.h"
#include "common/TesselRun.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::testsupport;
namespace fs = std::filesystem;

namespace {

/// A file size limit of 8 KiB (ulimit -f counts KiB): a module's library, a network's params
/// and a shipped records log are all larger.
const TesselRun kSmallFilesOnly = TesselRun::limitedBy("-f 8");

class AtomicOutputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>("tessel-outputs");
    // y = relu(x), x of 4096 floats: a module whose output (16 KiB) is past the limit.
    writeFile(path("relu.onnx"), onnxModelBytes({{"Relu", "relu", {"x"}, {"y"}, {}}}, {onnxInput("x", {1, 4096})},
                                                {onnxOutput("y", 2)}, {}));
    auto compiled = runTessel({}, {"compile", "--model", path("relu.onnx"), "-o", module()});
    ASSERT_TRUE(compiled.ok()) << compiled.output;
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static std::string path(const std::string& name) { return dir_->path() + "/" + name; }
  static std::string module() { return path("relu.module"); }

  /// Every file under `directory` with a hash of its contents (a failure prints the names).
  static std::map<std::string, size_t> contents(const std::string& directory) {
    std::map<std::string, size_t> files;
    for (const auto& entry : fs::recursive_directory_iterator(directory))
      if (entry.is_regular_file())
        files[entry.path().filename().string()] = std::hash<std::string>{}(readFile(entry.path().string(), file_kinds::kSharedLibrary));
    return files;
  }
  /// The names in `directory` that hold ".tmp-": temporaries left behind.
  static std::vector<std::string> temporaries(const std::string& directory) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(directory))
      if (entry.path().filename().string().find(".tmp-") != std::string::npos) found.push_back(entry.path().string());
    return found;
  }

  static inline std::unique_ptr<TempDir> dir_;
};

// Defect 12: `run M --random --output M/graph.json` replaced the module's own graph.
TEST_F(AtomicOutputs, RunReplacesAnOutputFileOnlyWithForce) {
  std::string plan = readFile(module() + "/graph.json");
  expectCleanError(runTessel({}, {"run", module(), "--random", "--output", module() + "/graph.json"}),
                   "--output " + module() + "/graph.json: the file exists; pass --force to replace it");
  EXPECT_EQ(readFile(module() + "/graph.json"), plan);
  EXPECT_TRUE(runTessel({}, {"run", module()}).ok());

  writeFile(path("y.npy"), "old");
  EXPECT_TRUE(runTessel({}, {"run", module(), "--output", path("y.npy"), "--force"}).ok());
  EXPECT_GT(readFile(path("y.npy")).size(), 16384u);
}

// Defect 11: outputs were truncated and written in place; a full disk left a 4096-byte .npy, a
// 0-byte params file, a partial records log and its *.tmp-PID, and a destroyed module.
TEST_F(AtomicOutputs, AFailedWriteLeavesTheOldFileAsItWas) {
  writeFile(path("out.npy"), "old output");
  auto run = runTessel(kSmallFilesOnly, {"run", module(), "--output", path("out.npy"), "--force"});
  expectCleanError(run, "cannot write " + path("out.npy") + ": File too large");
  EXPECT_EQ(readFile(path("out.npy")), "old output");

  writeFile(path("weights.params"), "old params");
  auto params = runTessel(kSmallFilesOnly, {"params", "--model", "squeezenet_v1.1", "-o", path("weights.params"), "--force"});
  expectCleanError(params, "cannot write " + path("weights.params") + ": File too large");
  EXPECT_EQ(readFile(path("weights.params")), "old params");

  const std::string shipped = std::string(TESSEL_SOURCE_DIR) + "/records/cpu/x86_64-avx512.log";
  writeFile(path("best.log"), "old log\n");
  auto best = runTessel(kSmallFilesOnly, {"records", "best", shipped, "-o", path("best.log"), "--force"});
  expectCleanError(best, "cannot write " + path("best.log") + ": File too large");
  EXPECT_EQ(readFile(path("best.log")), "old log\n");

  EXPECT_EQ(temporaries(dir_->path()), std::vector<std::string>{});
}

// Defect 11: `compile -o DIR` over a working module destroyed it before failing.
TEST_F(AtomicOutputs, AFailedCompileLeavesTheOldModuleAsItWas) {
  std::string target = path("kept.module");
  fs::copy(module(), target, fs::copy_options::recursive);
  auto before = contents(target);
  auto failed = runTessel(kSmallFilesOnly, {"compile", "--model", "squeezenet_v1.1", "-o", target});
  expectCleanError(failed, "File too large");
  EXPECT_EQ(contents(target), before);
  EXPECT_TRUE(runTessel({}, {"run", target}).ok());
  EXPECT_EQ(temporaries(dir_->path()), std::vector<std::string>{});

  // Compiled again without the limit, the module is replaced as a whole.
  ASSERT_TRUE(runTessel({}, {"compile", "--model", "squeezenet_v1.1", "-o", target}).ok());
  EXPECT_NE(contents(target), before);
  EXPECT_TRUE(runTessel({}, {"run", target}).ok());
  EXPECT_EQ(temporaries(dir_->path()), std::vector<std::string>{});
}

// A module directory is replaced as a whole: one that holds anything but a module may be the
// user's own, and is refused.
TEST_F(AtomicOutputs, ADirectoryThatIsNotAModuleIsNotReplaced) {
  fs::create_directories(path("mine"));
  writeFile(path("mine/notes.txt"), "mine");
  expectCleanError(runTessel({}, {"compile", "--model", path("relu.onnx"), "-o", path("mine")}),
                   "--output " + path("mine") + ": the directory exists and holds no graph.json, so it is not a module tessel "
                   "wrote");
  EXPECT_EQ(readFile(path("mine/notes.txt")), "mine");
  // An empty directory takes a module.
  fs::create_directories(path("empty"));
  EXPECT_TRUE(runTessel({}, {"compile", "--model", path("relu.onnx"), "-o", path("empty")}).ok());
  EXPECT_TRUE(fs::exists(path("empty/graph.json")));
}

// Defect 10: `compile -o -weird` gave gcc the option '-weird/kernels.so.cpp' and left half a
// module.
TEST_F(AtomicOutputs, AnOutputNamedLikeAnOptionIsAPath) {
  TesselRun inDirectory = TesselRun::inDirectory(dir_->path());
  auto compiled = runTessel(inDirectory, {"compile", "--model", path("relu.onnx"), "-o", "-weird"});
  ASSERT_TRUE(compiled.ok()) << compiled.output;
  EXPECT_EQ(compiled.output.find("unrecognized command-line option"), std::string::npos) << compiled.output;
  EXPECT_TRUE(fs::exists(path("-weird/kernels.so")));
  EXPECT_TRUE(runTessel(inDirectory, {"run", "./-weird"}).ok());
}

/// Starts tessel with `arguments`, TMPDIR=`temporary` and its output to /dev/null; returns its pid.
pid_t startTessel(const std::vector<std::string>& arguments, const std::string& temporary) {
  std::vector<std::string> argv = {tesselCli()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  SpawnOptions spawn;
  spawn.standardOutput = spawn.standardError = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  spawn.environment = {{"TMPDIR", temporary}};
  spawn.searchPath = false;
  pid_t pid = spawnProcess(argv, spawn);
  ::close(spawn.standardOutput);
  return pid;
}

/// Waits (at most a minute) until `directory` has an entry whose name starts with `prefix`.
bool appears(const std::string& directory, const std::string& prefix) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& entry : fs::directory_iterator(directory))
      if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

/// Waits (at most a minute) until a directory in `directory` whose name starts with `prefix`
/// holds `file`; returns its name. Directories that come and go meanwhile are passed over: the
/// output check's probe (checkOutputDirectory) is a "NAME.tmp-" directory made and removed at once.
std::string directoryHolding(const std::string& directory, const std::string& prefix, const std::string& file) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(directory, error)) {
      std::string name = entry.path().filename().string();
      if (name.rfind(prefix, 0) == 0 && fs::exists(entry.path() / file, error)) return name;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

/// SIGTERM to `pid`; true when it then ended by that signal.
bool terminate(pid_t pid) {
  ::kill(pid, SIGTERM);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
}

std::vector<std::string> entriesOf(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) names.push_back(entry.path().filename().string());
  return names;
}

// SIGINT and SIGTERM left empty tessel-build-* and tessel-run-* folders in the temporary
// directory, and a module half written.
TEST_F(AtomicOutputs, SigtermLeavesNothingBehind) {
  std::string temporary = path("tmp"), outputs = path("killed");
  fs::create_directories(temporary);
  fs::create_directories(outputs);
  // compile: killed while its compiler runs on the module's source (a compiler that takes its
  // time, so that the signal surely comes while it runs; it is killed with tessel).
  std::string slowCompiler = path("slow-cc");
  writeFile(slowCompiler, "#!/bin/sh\nsleep 600\nexec g++ \"$@\"\n");
  fs::permissions(slowCompiler, fs::perms::owner_all);
  pid_t compile = startTessel({"compile", "--model", path("relu.onnx"), "--target", "cpu -cc=" + slowCompiler, "-o",
                               outputs + "/module"},
                              temporary);
  // The staging directory that holds the module's source (not the output check's probe, which
  // a busy machine lets the test see before it is removed).
  std::string staging = directoryHolding(outputs, "module.tmp-", "kernels.so.cpp");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the compiler has started
  EXPECT_EQ(entriesOf(outputs), std::vector<std::string>{staging});
  EXPECT_TRUE(terminate(compile));
  ASSERT_NE(staging, "") << "no staging directory with the module's source";
  EXPECT_EQ(entriesOf(outputs), std::vector<std::string>{});
  // tune: killed while it measures candidates built in its temporary folder.
  pid_t tune = startTessel({"tune", "--model", "resnet-18", "--tasks", "1", "--n-trial", "64", "--log", outputs + "/t.log"},
                           temporary);
  ASSERT_TRUE(appears(temporary, "tessel-build-"));
  EXPECT_TRUE(terminate(tune));
  std::string left;
  for (const auto& entry : fs::recursive_directory_iterator(temporary)) left += "\n  " + entry.path().string();
  EXPECT_EQ(entriesOf(temporary), std::vector<std::string>{}) << "left behind:" << left;
}

}  // namespace
