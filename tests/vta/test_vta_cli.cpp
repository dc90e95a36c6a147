// `tessel vta config` and `tessel vta run` through their CLI11 definitions: the configuration
// listing, rejection of a bad file, and a program file run with the statistics printed in the
// seed's format.
#include <sstream>

#include <gtest/gtest.h>

#include "BlockedMatmul.h"
#include "cli/VtaCommand.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::vta;
using namespace tessel::vta::testing;

namespace {

/// Runs `tessel <arguments>` with the vta commands and returns what it printed.
std::string runCli(std::vector<std::string> arguments) {
  CLI::App app("tessel");
  tessel::cli::addVtaCommands(app);
  std::vector<const char*> argv{"tessel"};
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());
  std::ostringstream captured;
  std::streambuf* original = std::cout.rdbuf(captured.rdbuf());
  try {
    app.parse(int(argv.size()), const_cast<char**>(argv.data()));
  } catch (...) {
    std::cout.rdbuf(original);
    throw;
  }
  std::cout.rdbuf(original);
  return captured.str();
}

}  // namespace

TEST(VtaCli, ConfigPrintsTheDefaultAndDerivedSizes) {
  const std::string text = runCli({"vta", "config"});
  EXPECT_NE(text.find("LOG_WGT_BUFF_SIZE         18"), std::string::npos) << text;
  EXPECT_NE(text.find("BLOCK_OUT                 16"), std::string::npos) << text;
  EXPECT_NE(text.find("weight buffer             262144 B = 1024 elements of 256 B (index width 10 bits)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("sim_1x16_i8w8a32_15_15_18_17"), std::string::npos) << text;
}

TEST(VtaCli, ConfigFileIsReadAndABadOneRejected) {
  TempDir dir;
  nlohmann::json json = HardwareConfig{}.toJson();
  json["LOG_BATCH"] = 1;
  writeFile(dir.path() + "/good.json", json.dump());
  EXPECT_NE(runCli({"vta", "config", dir.path() + "/good.json"}).find("BATCH                     2"),
            std::string::npos);
  json["LOG_BLOCK"] = 9;
  writeFile(dir.path() + "/bad.json", json.dump());
  try {
    runCli({"vta", "config", dir.path() + "/bad.json"});
    FAIL() << "accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("LOG_BLOCK=9 is out of range"), std::string::npos);
  }
}

TEST(VtaCli, RunPrintsTheStatisticsInTheSeedFormat) {
  MatmulShape shape{.m = 32, .n = 32, .k = 64, .tileM = 4, .tileN = 2, .tileK = 2, .epilogue = true};
  TempDir dir;
  const std::string path = dir.path() + "/program.json";
  MatmulCounts expected;
  {
    Simulator recorder;
    CommandStream stream(recorder);
    MatmulProgram recorded = recordMatmul(stream, shape, randomMatmulData(shape, 3));
    expected = recorded.expected;
    Program program = stream.finishProgram();
    program.outputs.push_back({"C", recorded.c.address, 32});
    program.save(path);
  }
  for (const char* order : {"timed", "random"}) {
    const std::string text = runCli({"vta", "run", path, "--order", order, "--seed", "5", "--print-outputs"});
    EXPECT_NE(text.find("Execution statistics:\n"), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("\tinp_load_nbytes : {:>16}\n", expected.inputBytes)), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("\tgemm_counter    : {:>16}\n", expected.gemm)), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("\tout_store_nbytes: {:>16}\n", expected.outputBytes)), std::string::npos) << text;
    EXPECT_NE(text.find("Simulated time:"), std::string::npos) << text;
    EXPECT_NE(text.find("C (32 bytes at"), std::string::npos) << text;
  }
  const std::string listing = runCli({"vta", "run", path, "--disassemble"});
  EXPECT_NE(listing.find("    0  "), std::string::npos);
  EXPECT_NE(listing.find("FINISH"), std::string::npos);
}
