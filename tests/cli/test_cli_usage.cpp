// The `tessel` command line as a newcomer meets it (issue 39, defects 14-16): --version, every
// default in --help, the nearest option for a misspelt one, enumerated values in any case, the
// shipped records of every kind of target, one numbering of the tasks in `tasks`, `tune
// --list-tasks` and a tuning run, and the README's command lines written in the options the CLI
// has.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

using tessel::testsupport::runTessel;

using namespace tessel;
using namespace tessel::testsupport;

namespace {

/// A command line refused as a usage error: exit code 2, `part` in the message.
void expectUsageError(const SubprocessResult& r, const std::string& part) {
  EXPECT_EQ(r.exitCode, 2) << r.describe() << "\n" << r.output;
  expectContains(r.output, part);
}

TEST(CliUsage, VersionFlagAndCommandSayTheProjectsVersion) {
  for (const char* spelling : {"--version", "version"}) {
    auto r = runTessel({spelling});
    EXPECT_TRUE(r.ok()) << spelling << ": " << r.describe() << "\n" << r.output;
    EXPECT_EQ(r.output, std::string("tessel ") + TESSEL_VERSION + "\n") << spelling;
  }
}

TEST(CliUsage, HelpShowsTheDefaults) {
  auto r = runTessel({"tune", "--help"});
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  // A bare tune is --n-trial per task: the help says how many.
  for (const char* shown : {"--n-trial INT:INT in [1, 1099511627776]=1000", "--scheduler TEXT:{autotvm,auto}=autotvm",
                            "--cold-cache TEXT:{auto,always,never}=auto", "--repeat INT:INT in [1, 10000]=3", "--tuner TEXT=xgb",
                            "--target TEXT=cpu", "--winograd TEXT:{auto,never,2,4,6}=auto"})
    expectContains(r.output, shown);
  auto records = runTessel({"records", "distill", "--help"});
  expectContains(records.output, "--top INT:INT in [1, 1000000]=1");
}

TEST(CliUsage, AnUnknownOptionOrCommandGetsTheNearestKnownOne) {
  TempDir dir;
  auto plural = runTessel({"tune", "--model", "resnet-18", "--n-trials", "4", "--log", dir.path() + "/t.log"});
  expectUsageError(plural, "error: --n-trials: unknown option of `tessel tune`; did you mean --n-trial?");
  EXPECT_EQ(plural.output.find("Extract tasks"), std::string::npos) << plural.output;
  // A misspelt required option is the misspelling, not the missing option.
  expectUsageError(runTessel({"compile", "--modle", "resnet-18", "-o", dir.path() + "/m"}),
                   "error: --modle: unknown option of `tessel compile`; did you mean --model?");
  expectUsageError(runTessel({"tunee", "--model", "resnet-18"}), "error: tunee: unexpected argument of `tessel`; did you mean tune?");
  expectUsageError(runTessel({"records", "shiped"}), "did you mean shipped?");
  // Nothing near: where to look instead.
  expectUsageError(runTessel({"tasks", "--model", "resnet-18", "--frobnicate"}),
                   "error: --frobnicate: unknown option of `tessel tasks` (`tessel tasks --help` lists its options)");
}

TEST(CliUsage, EnumeratedValuesTakeAnyCase) {
  auto r = runTessel({"tasks", "--model", "resnet-18", "--image-size", "32", "--layout", "nhwc", "--desired-layout", "Nhwc",
                   "--winograd", "NEVER", "--scheduler", "AutoTVM"});
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "Extracted ");
  expectUsageError(runTessel({"tasks", "--model", "resnet-18", "--layout", "nhcw"}), "--layout: nhcw not in {NCHW,NHWC}");
}

TEST(CliUsage, ShippedRecordsOfEveryKindOfTarget) {
  auto cuda = runTessel({"records", "shipped", "--target", "cuda"});
  EXPECT_TRUE(cuda.ok()) << cuda.describe() << "\n" << cuda.output;
  expectContains(cuda.output, "target cuda: cuda/sm_90 (shipped)");
  auto opencl = runTessel({"records", "shipped", "--target", "opencl"});
  EXPECT_TRUE(opencl.ok()) << opencl.output;
  expectContains(opencl.output, "target opencl: none (tessel ships no records for this kind of device");
  auto vta = runTessel({"records", "shipped", "--target", "vta"});
  EXPECT_TRUE(vta.ok()) << vta.output;
  expectContains(vta.output, "target vta: vta/sim_");
  expectContains(vta.output, " (shipped)");
}

/// The lines of the task list ("  NN  name  template ...") in an output.
std::vector<std::string> taskLines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Extracted ", 0) == 0) {
      listing = true;
      continue;
    }
    if (listing && line.rfind("  ", 0) != 0) listing = false;
    if (listing) lines.push_back(line);
  }
  return lines;
}

// Issue 39, defect 14: `tasks` listed 19 functions from 0, `tune` 22 tasks from 1 (with the
// Winograd and direct variants), and nothing listed tune's tasks without tuning.
TEST(CliUsage, TasksListsWhatTuneTunesUnderTheSameNumbers) {
  for (const char* scheduler : {"autotvm", "auto"}) {
    auto tasks = runTessel({"tasks", "--model", "resnet-18", "--scheduler", scheduler});
    auto listed = runTessel({"tune", "--model", "resnet-18", "--list-tasks", "--scheduler", scheduler});
    ASSERT_TRUE(tasks.ok()) << tasks.describe() << "\n" << tasks.output;
    ASSERT_TRUE(listed.ok()) << listed.describe() << "\n" << listed.output;
    EXPECT_EQ(tasks.output, listed.output);
    auto lines = taskLines(tasks.output);
    ASSERT_GE(lines.size(), 16u) << tasks.output;
    EXPECT_EQ(lines[0].rfind("   1  conv1_relu ", 0), 0u) << lines[0];
    EXPECT_EQ(tasks.output.find("Task 0"), std::string::npos) << tasks.output;
  }
  auto templates = runTessel({"tasks", "--model", "resnet-18"});
  // The Winograd layer is a task in each variant, listed together; pooling and softmax are not
  // template tasks and are said to be so.
  expectContains(templates.output, "   2  layer1_0_1_relu              conv2d_nhwc_winograd.x86");
  expectContains(templates.output, "   3  layer1_0_1_relu              conv2d_nhwc_packed.x86");
  expectContains(templates.output, "Not tuned by templates (");
  expectContains(templates.output, "maxpool, global_pool, softmax");
  auto dags = runTessel({"tasks", "--model", "resnet-18", "--image-size", "64", "--dag"});
  expectContains(dags.output, "========== Task 1  (workload key: ");
  EXPECT_EQ(dags.output.find("========== Task 0 "), std::string::npos) << dags.output;
}

// --tasks N tunes the task listed as N and every line about it says N, with either tuner (the
// auto-scheduler printed "Task 0", then "[Task 1/1]", then ID 0 in its table for one task).
TEST(CliUsage, TuneTasksSelectsTheTaskListedUnderThatNumber) {
  const std::vector<std::string> network = {"--model", "resnet-18", "--image-size", "64"};
  auto with = [&](std::vector<std::string> argv) {  // the command, then the network, then the rest
    argv.insert(argv.begin() + 1, network.begin(), network.end());
    return argv;
  };
  auto listing = runTessel(with({"tasks"}));
  ASSERT_TRUE(listing.ok()) << listing.output;
  auto lines = taskLines(listing.output);
  ASSERT_GE(lines.size(), 5u);
  const std::string total = std::to_string(lines.size());
  TempDir dir;
  const std::vector<std::string> quick = {"--n-trial", "2", "--tuner", "random", "--batch-size", "2", "--number", "1", "--repeat", "1",
                                          "--confirm-top", "0", "--no-evaluate"};
  auto argv = with({"tune", "--tasks", "5", "--log", dir.path() + "/a.log"});
  argv.insert(argv.end(), quick.begin(), quick.end());
  auto r = runTessel(argv, 600);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "Extracted " + total + " tasks; tuning 1 of them (--tasks, --ops):\n" + lines[4] + "\n");
  expectContains(r.output, "[Task  5/" + total + "]");
  expectContains(r.output, "Tuning 1 task: at most 2 trials (--n-trial 2 per task, capped by its configs)...");
  expectContains(r.output, "| run: no trials left Done.");

  auto autoListing = runTessel(with({"tasks", "--scheduler", "auto"}));
  auto autoLines = taskLines(autoListing.output);
  ASSERT_GE(autoLines.size(), 5u);
  const std::string autoTotal = std::to_string(autoLines.size());
  argv = with({"tune", "--scheduler", "auto", "--tasks", "5", "--log", dir.path() + "/b.log"});
  argv.insert(argv.end(), quick.begin(), quick.end());
  r = runTessel(argv, 600);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, autoLines[4] + "\n");
  expectContains(r.output, "========== Task 5  (workload key: ");
  expectContains(r.output, "[Task  5/" + autoTotal + "]");
  expectContains(r.output, "|    5 |");
  EXPECT_EQ(r.output.find("Task 0"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("|    0 |"), std::string::npos) << r.output;
}

// ---- the README's command lines ---------------------------------------------------------

/// Shell words: quotes group, a # after a blank starts a comment.
std::vector<std::string> shellWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      inWord = true;
    } else if (c == ' ' || c == '\t') {
      if (inWord) words.push_back(word);
      word.clear();
      inWord = false;
    } else if (c == '#' && !inWord) {
      break;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push_back(word);
  return words;
}

std::vector<std::string> readmeLines() {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/README.md");
  EXPECT_TRUE(in.good()) << "cannot read README.md";
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// A `tessel ...` command of the README's code blocks: its line, its words, and the line after
/// it (its output, or the next command).
struct ReadmeCommand {
  int line = 0;
  std::vector<std::string> words;
  std::string next;
};

/// Every `tessel ...` command of the README's code blocks ("$ tessel ...", continued on the
/// lines after a trailing backslash, each part of a "... && tessel ..." chain).
std::vector<ReadmeCommand> readmeCommands() {
  std::vector<std::string> lines = readmeLines();
  std::vector<ReadmeCommand> commands;
  bool block = false;
  for (size_t n = 0; n < lines.size(); ++n) {
    const int number = int(n) + 1;
    size_t start = lines[n].find_first_not_of(' ');
    if (start == std::string::npos) continue;
    std::string text = lines[n].substr(start);
    if (text.rfind("```", 0) == 0) {
      block = !block;
      continue;
    }
    if (!block || text.rfind("$ ", 0) != 0) continue;
    text = text.substr(2);
    while (!text.empty() && text.back() == '\\' && n + 1 < lines.size()) text = text.substr(0, text.size() - 1) + " " + lines[++n];
    std::string next = n + 1 < lines.size() ? lines[n + 1] : "";
    for (size_t from = 0; from <= text.size();) {
      size_t chain = text.find("&&", from);
      std::vector<std::string> words = shellWords(text.substr(from, chain == std::string::npos ? std::string::npos : chain - from));
      if (!words.empty() && words[0] == "tessel") commands.push_back({number, words, next});
      if (chain == std::string::npos) break;
      from = chain + 2;
    }
  }
  return commands;
}

/// What `tessel PATH --help` lists: option spellings and subcommand names.
struct CommandHelp {
  std::set<std::string> options, subcommands;
};

CommandHelp helpOf(const std::vector<std::string>& path) {
  std::vector<std::string> argv = path;
  argv.push_back("--help");
  auto r = runTessel(argv);
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  CommandHelp help;
  std::istringstream in(r.output);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == ':' && line[0] != ' ') {
      section = line;
      continue;
    }
    if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') continue;
    std::string first = line.substr(2, line.find(' ', 2) - 2);
    if (section == "Options:") {
      std::stringstream names(first);
      for (std::string name; std::getline(names, name, ',');) help.options.insert(name);
    } else if (section == "Subcommands:") {
      help.subcommands.insert(first);
    }
  }
  return help;
}

// Issue 39, defect 16: the README showed output and options that no longer held, and words a
// newcomer cannot decode (the project's own "seed 004", "issue 16"). Every command line in its
// code blocks names commands and options the CLI has.
TEST(CliUsage, ReadmeCommandLinesUseTheCliAsItIs) {
  std::vector<std::string> lines = readmeLines();
  const std::regex jargon(R"((^|[^a-z])(seeds? [0-9]{3}|seeds' |issue [0-9]+))", std::regex::icase);
  for (size_t n = 0; n < lines.size(); ++n)
    EXPECT_FALSE(std::regex_search(lines[n], jargon)) << "README.md:" << n + 1 << ": project-internal words: " << lines[n];
  auto commands = readmeCommands();
  ASSERT_GE(commands.size(), 40u);
  std::map<std::vector<std::string>, CommandHelp> helps;
  auto help = [&](const std::vector<std::string>& path) -> const CommandHelp& {
    auto it = helps.find(path);
    if (it == helps.end()) it = helps.emplace(path, helpOf(path)).first;
    return it->second;
  };
  for (const ReadmeCommand& c : commands) {
    const std::vector<std::string>& words = c.words;
    std::vector<std::string> path;
    size_t i = 1;
    while (i < words.size() && help(path).subcommands.count(words[i])) path.push_back(words[i++]);
    std::string where = "README.md:" + std::to_string(c.line) + ": tessel";
    for (const auto& p : path) where += " " + p;
    if (!help(path).subcommands.empty() && i < words.size() && words[i][0] != '-') {
      ADD_FAILURE() << where << ": no such command: " << words[i];
      continue;
    }
    for (; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w.size() < 2 || w[0] != '-' || (w[1] >= '0' && w[1] <= '9')) continue;
      std::string name = w.substr(0, w.find('='));
      // A sample of a misspelt option shows the CLI's answer to it.
      bool shownAsMistake = c.next.rfind("error: " + name + ": unknown option", 0) == 0;
      EXPECT_TRUE(help(path).options.count(name) || shownAsMistake) << where << ": no option " << name;
    }
  }
}

}  // namespace
