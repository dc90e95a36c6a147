// The lookup of the programs tessel starts (HelperPrograms.h): the variable first, then the
// program directory an embedding names, then the build tree's copy, which this test (a program
// of the build tree) may use. That an installed copy never does is test_installed_tessel.sh's.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "support/HelperPrograms.h"
#include "support/TempDir.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

constexpr const char* kHelperName = "tessel-helper-program-test";
constexpr const char* kHelperVariable = "TESSEL_HELPER_PROGRAM_TEST";

/// A file at `path`, executable or not.
std::string makeHelperFile(const fs::path& path, bool executable) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\n";
  chmod(path.c_str(), executable ? 0755 : 0644);
  return path.string();
}

class HelperProgramsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv(kHelperVariable);
    setProgramDirectory("");
  }
  TempDir dir_{"helper-programs"};
};

}  // namespace

TEST_F(HelperProgramsTest, ThisTestRunsFromTheBuildTree) { EXPECT_TRUE(runningFromBuildTree()); }

TEST_F(HelperProgramsTest, TheVariableWinsThenTheProgramDirectoryThenTheBuildTree) {
  std::string chosen = makeHelperFile(fs::path(dir_.path()) / "chosen" / kHelperName, true);
  std::string installed = makeHelperFile(fs::path(dir_.path()) / "bin" / kHelperName, true);
  std::string built = makeHelperFile(fs::path(dir_.path()) / "build" / kHelperName, true);
  HelperProgram program{kHelperName, kHelperVariable, built};
  std::vector<std::string> tried;

  setenv(kHelperVariable, chosen.c_str(), 1);
  setProgramDirectory((fs::path(dir_.path()) / "bin").string());
  EXPECT_EQ(findHelperProgram(program, tried), chosen);
  EXPECT_TRUE(tried.empty());

  unsetenv(kHelperVariable);
  EXPECT_EQ(findHelperProgram(program, tried), installed);

  setProgramDirectory("");
  EXPECT_EQ(findHelperProgram(program, tried), built);
}

TEST_F(HelperProgramsTest, WhatIsNotAnExecutableFileIsPassedOverAndNamed) {
  std::string notExecutable = makeHelperFile(fs::path(dir_.path()) / "chosen" / kHelperName, false);
  fs::create_directories(fs::path(dir_.path()) / "bin" / kHelperName);  // a directory of the name
  std::string built = (fs::path(dir_.path()) / "build" / kHelperName).string();
  setenv(kHelperVariable, notExecutable.c_str(), 1);
  setProgramDirectory((fs::path(dir_.path()) / "bin").string());
  std::vector<std::string> tried;
  EXPECT_EQ(findHelperProgram({kHelperName, kHelperVariable, built}, tried), std::nullopt);
  ASSERT_EQ(tried.size(), 4u);  // the variable, beside this test, the program directory, the build tree
  EXPECT_EQ(tried[0], std::string("$") + kHelperVariable + "=" + notExecutable);
  EXPECT_EQ(tried[1], (fs::path(executableDirectory()) / kHelperName).string());
  EXPECT_EQ(tried[2], (fs::path(dir_.path()) / "bin" / kHelperName).string());
  EXPECT_EQ(tried[3], built);
}
