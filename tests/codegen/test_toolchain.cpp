// Toolchain failures: whatever goes wrong in the compiler call (bad source, a flag the compiler
// rejects, a missing compiler, a hang) surfaces as an Error carrying the compiler's own message
// and the path of the generated source, which stays on disk for inspection.
#include <gtest/gtest.h>

#include <filesystem>

#include "codegen/Toolchain.h"
#include "common/ErrorText.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::testsupport;

namespace {

const char* kValidSource = "extern \"C\" int tessel_answer(void) { return 42; }\n";

class ToolchainTest : public ::testing::Test {
 protected:
  TempDir dir_{"tessel-toolchain-test"};
  std::string library() const { return dir_.path() + "/kernel.so"; }
  std::string source() const { return library() + ".cpp"; }
};

TEST_F(ToolchainTest, ValidSourceBuildsALibraryBesideItsSource) {
  codegen::compileSharedLibrary(kValidSource, library());
  EXPECT_TRUE(std::filesystem::exists(library()));
  EXPECT_EQ(readFile(source()), kValidSource);
}

TEST_F(ToolchainTest, InvalidSourceReportsTheCompilerMessageAndTheSourcePath) {
  std::string bad = "extern \"C\" int broken(void) { return undeclared_name; }\n";
  std::string e = errorOf([&] { codegen::compileSharedLibrary(bad, library()); });
  expectContains(e, "the C++ compiler failed on " + source());
  expectContains(e, "exit code 1");
  expectContains(e, "error:");               // the compiler's own diagnostic...
  expectContains(e, "undeclared_name");      // ...naming what is wrong
  EXPECT_EQ(readFile(source()), bad);        // the source is kept for inspection
  EXPECT_FALSE(std::filesystem::exists(library()));
}

TEST_F(ToolchainTest, RejectedFlagReportsTheCompilerMessageAndTheSourcePath) {
  codegen::CompileOptions options;
  options.flags = {"-O2", "-march=tessel-no-such-cpu"};
  std::string e = errorOf([&] { codegen::compileSharedLibrary(kValidSource, library(), options); });
  expectContains(e, source());
  expectContains(e, "tessel-no-such-cpu");
}

TEST_F(ToolchainTest, MissingCompilerNamesTheProgramAndTheSourcePath) {
  codegen::CompileOptions options;
  options.compiler = "/nonexistent/tessel-cc";
  std::string e = errorOf([&] { codegen::compileSharedLibrary(kValidSource, library(), options); });
  expectContains(e, "compiling " + source());
  expectContains(e, "cannot run '/nonexistent/tessel-cc'");
}

TEST_F(ToolchainTest, CompilerThatHangsIsStoppedAtTheTimeout) {
  codegen::CompileOptions options;
  options.timeout = std::chrono::milliseconds(1);
  std::string e = errorOf([&] { codegen::compileSharedLibrary(kValidSource, library(), options); });
  expectContains(e, source());
  expectContains(e, "timed out");
}

TEST_F(ToolchainTest, UnwritableOutputDirectoryNamesThePath) {
  std::string e = errorOf([&] { codegen::compileSharedLibrary(kValidSource, dir_.path() + "/missing/dir/kernel.so"); });
  expectContains(e, dir_.path() + "/missing/dir/kernel.so.cpp");
}

}  // namespace
