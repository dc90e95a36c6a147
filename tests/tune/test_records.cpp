// The records log: the record format and its strict reading, replaying a record into the same
// kernel source, damaged logs, appending, pick-best queries, apply-history-best dispatch, and
// the `tessel records` commands.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

#include "codegen/CSource.h"
#include "common/ErrorText.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "target/HostCpu.h"
#include "tune/HistoryBest.h"
#include "tune/MeasureOptions.h"
#include "tune/PlausibleCost.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"
#include "tune/ShippedRecords.h"

using namespace tessel;
using namespace tessel::tune;
using schedule::StepPtr;
using testsupport::errorOf;
using testsupport::expectContains;

namespace {

template <class S, class... Args>
StepPtr step(Args&&... args) {
  return std::make_shared<S>(std::forward<Args>(args)...);
}

/// A tiled matmul 32x32x32 with a cache-write stage computed inside the tile, a parallel outer
/// loop with an unroll pragma, and vectorized inner loops.
std::vector<StepPtr> tiledSteps() {
  using namespace schedule;
  using Names = std::vector<std::string>;
  return {step<CacheWriteStep>("C", "local"),
          step<SplitStep>("C", "i", std::vector<int64_t>{8}),
          step<SplitStep>("C", "j", std::vector<int64_t>{8}),
          step<ReorderStep>("C", Names{"i.0", "j.0", "i.1", "j.1"}),
          step<ComputeAtStep>("C.local", "C", "j.0"),
          step<AnnotateStep>("C", "i.0", Annotation::Parallel),
          step<PragmaStep>("C", "i.0", "auto_unroll_max_step", "16"),
          step<AnnotateStep>("C", "j.1", Annotation::Vectorize)};
}

MeasureTaskPtr matmulTask(int64_t n = 32, const std::string& target = "cpu") {
  return makeMeasureTask("matmul", ops::matmul(n, n, n), target::Target::parse(target));
}

MeasureResult okResult(std::vector<double> costs, double timestamp = 1700000000.25) {
  MeasureResult r;
  r.costs = std::move(costs);
  r.callsPerRepeat = 10;
  r.buildSeconds = 0.125;
  r.runSeconds = 0.5;
  r.allCost = 0.625;
  r.timestamp = timestamp;
  return r;
}

MeasureResult failedResult(MeasureErrorNo errorNo, const std::string& message) {
  MeasureResult r = okResult({});
  r.errorNo = errorNo;
  r.errorMessage = message;
  return r;
}

/// A template record: template arguments and config entity as a config space would write them.
TuningRecord templateRecord(const MeasureTaskPtr& task, int64_t index, std::vector<double> costs) {
  MeasureInput input{task, tiledSteps(), ""};
  nlohmann::json args = nlohmann::json::array({nlohmann::json::array({"TENSOR", {32, 32}, "float32"}), 32});
  nlohmann::json entity = nlohmann::json::array({nlohmann::json::array({"tile_y", "sp", {-1, 8}}),
                                                 nlohmann::json::array({"unroll", "ot", true})});
  return makeRecord(input, okResult(std::move(costs)), "dense_pack.x86", args, RecordConfig{index, entity});
}

/// A record of a bare step list (no template), as the auto-scheduler writes.
TuningRecord stepsRecord(const MeasureTaskPtr& task, std::vector<StepPtr> steps, MeasureResult result) {
  return makeRecord(MeasureInput{task, std::move(steps), ""}, result);
}

std::string kernelSource(const te::ComputeDAG& dag, const std::vector<StepPtr>& steps) {
  return codegen::generateCSource({passes::lower(schedule::replay(dag, steps), "kernel")});
}

std::string writeText(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir.path() + "/" + name;
  writeFile(path, text);
  return path;
}

// ---- the record format -----------------------------------------------------------------------

TEST(Records, EveryFieldRoundTrips) {
  auto task = matmulTask();
  TuningRecord r = templateRecord(task, 4711, {1.5e-5, 1.25e-5, 2.0e-5});
  r.result.errorMessage = "line one\nline \"two\"";
  std::string line = recordToLine(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind("{\"version\":1,\"target\":\"cpu\",", 0), 0u) << line;

  TuningRecord back = recordFromLine(line);
  EXPECT_EQ(back.version, kRecordVersion);
  EXPECT_EQ(back.target, "cpu");
  EXPECT_EQ(back.task.workloadKey, task->workloadKey);
  EXPECT_EQ(back.task.name, "matmul");
  EXPECT_EQ(back.task.flops, 2.0 * 32 * 32 * 32);
  EXPECT_EQ(back.task.templateName, "dense_pack.x86");
  EXPECT_EQ(back.task.templateArgs, r.task.templateArgs);
  EXPECT_EQ(schedule::stepsToJson(back.steps), schedule::stepsToJson(r.steps));
  ASSERT_TRUE(back.config.has_value());
  EXPECT_EQ(back.config->index, 4711);
  EXPECT_EQ(back.config->entity, r.config->entity);
  EXPECT_EQ(back.result.costs, r.result.costs);  // exact: doubles are written to round-trip
  EXPECT_EQ(back.result.errorNo, MeasureErrorNo::NoError);
  EXPECT_EQ(back.result.errorMessage, r.result.errorMessage);
  EXPECT_EQ(back.result.callsPerRepeat, 10);
  EXPECT_EQ(back.result.buildSeconds, 0.125);
  EXPECT_EQ(back.result.runSeconds, 0.5);
  EXPECT_EQ(back.result.allCost, 0.625);
  EXPECT_EQ(back.result.timestamp, 1700000000.25);
  EXPECT_EQ(recordToLine(back), line);
  // The machine it was measured on: the CPU target's model (this machine for "cpu").
  ASSERT_TRUE(back.machine.has_value());
  EXPECT_EQ(*back.machine, (RecordMachine{target::hostCpu().recordFamily(), target::hostCpu().cores, target::hostCpu().name}));
  EXPECT_NE(line.find("\"machine\":{\"class\":\"" + target::hostCpu().recordFamily() + "\""), std::string::npos) << line;
  EXPECT_DOUBLE_EQ(back.cost(), 1.5e-5);  // the median: one slow repeat does not move it
  EXPECT_DOUBLE_EQ(back.gflops(), 2.0 * 32 * 32 * 32 / 1.5e-5 / 1e9);
  EXPECT_FALSE(back.result.confirmed);

  // A confirmed decision keeps its flag and what it was compared with.
  TuningRecord decided = r;
  decided.result.confirmed = true;
  decided.result.underLoad = true;
  decided.result.confirmation = {{"rounds", 5}, {"fallback_index", 7}, {"kept_fallback", false}};
  TuningRecord decidedBack = recordFromLine(recordToLine(decided));
  EXPECT_TRUE(decidedBack.result.confirmed);
  EXPECT_TRUE(decidedBack.result.underLoad);
  EXPECT_EQ(decidedBack.result.confirmation, decided.result.confirmation);
  // A line written before these fields existed reads as unconfirmed.
  EXPECT_EQ(line.find("confirmed"), std::string::npos);
  // A copy (a config whose steps an earlier config had: not measured again) names that config.
  TuningRecord copy = r;
  copy.result.sameAs = 17;
  EXPECT_EQ(recordFromLine(recordToLine(copy)).result.sameAs, std::optional<int64_t>(17));
  EXPECT_FALSE(back.result.sameAs.has_value());
  EXPECT_EQ(line.find("same_as"), std::string::npos);

  // A record without a template, with an error, on another target.
  TuningRecord e = stepsRecord(matmulTask(32, "cpu -mcpu=haswell -num-cores=6"), {}, failedResult(MeasureErrorNo::RunTimeoutError, "timed out"));
  TuningRecord eBack = recordFromJson(recordToJson(e));
  EXPECT_EQ(eBack.target, "cpu -mcpu=haswell -num-cores=6");
  EXPECT_EQ(*eBack.machine, (RecordMachine{"x86_64-avx2", 6, "haswell"}));
  EXPECT_FALSE(eBack.task.fromTemplate());
  EXPECT_TRUE(eBack.task.templateArgs.is_null());
  EXPECT_FALSE(eBack.config.has_value());
  EXPECT_TRUE(eBack.steps.empty());
  EXPECT_EQ(eBack.result.errorNo, MeasureErrorNo::RunTimeoutError);
  EXPECT_EQ(recordToJson(e)["result"]["error_name"], "RunTimeoutError");
  EXPECT_TRUE(std::isinf(eBack.cost()));
  EXPECT_EQ(eBack.gflops(), 0.0);
  EXPECT_EQ(recordToLine(eBack), recordToLine(e));
}

TEST(Records, StrictReadingNamesTheField) {
  nlohmann::json good = recordToJson(templateRecord(matmulTask(), 3, {1e-5}));
  auto without = [&](const std::string& pointer) {
    nlohmann::json j = good;
    nlohmann::json::json_pointer p(pointer);
    j[p.parent_pointer()].erase(p.back());
    return errorOf([&] { recordFromJson(j); });
  };
  auto with = [&](const std::string& pointer, nlohmann::json value) {
    nlohmann::json j = good;
    j[nlohmann::json::json_pointer(pointer)] = std::move(value);
    return errorOf([&] { recordFromJson(j); });
  };
  EXPECT_EQ(errorOf([&] { recordFromJson(good); }), "(no error)");
  expectContains(without("/version"), "missing field 'version'");
  expectContains(without("/target"), "missing field 'target'");
  expectContains(without("/task/workload_key"), "missing field 'task.workload_key'");
  expectContains(without("/task/template/args"), "missing field 'task.template.args'");
  expectContains(without("/schedule/steps"), "missing field 'schedule.steps'");
  expectContains(without("/schedule/config/entity"), "missing field 'schedule.config.entity'");
  expectContains(without("/result/timestamp"), "missing field 'result.timestamp'");
  expectContains(without("/result/error_name"), "missing field 'result.error_name'");
  EXPECT_FALSE(recordFromJson([&] {  // written before records carried their machine
                 nlohmann::json j = good;
                 j.erase("machine");
                 return j;
               }())
                   .machine.has_value());
  expectContains(without("/machine/cores"), "missing field 'machine.cores'");
  expectContains(with("/machine/cores", 0), "machine: expected a class and from 1 to 100000 cores");
  expectContains(with("/machine/class", 7), "machine.class: expected a string");

  expectContains(with("/version", 2), "version: record format version 2 is not one this tessel reads (it reads 1)");
  expectContains(with("/version", "0.2"), "version: expected an integer");
  expectContains(with("/result/costs/0", "fast"), "result.costs[0]: expected a number");
  expectContains(with("/result/costs/0", -1.0), "result.costs[0]: a cost cannot be negative");
  expectContains(with("/result/costs", nlohmann::json::array()), "result.costs: empty for a trial without error");
  expectContains(with("/result/error_no", 12), "result.error_no: 12 is not an error number");
  expectContains(with("/result/error_name", "CompileHostError"), "does not match error_no 0");
  expectContains(with("/task", "matmul"), "task: expected an object");
  expectContains(with("/task/flops", "many"), "task.flops: expected a number");
  expectContains(with("/schedule/config/template", "other"), "differs from task.template.name 'dense_pack.x86'");
  expectContains(with("/schedule/config", nullptr), "schedule.config: missing for a task of template 'dense_pack.x86'");
  expectContains(with("/task/template", nullptr), "for a task without a template");
  expectContains(with("/schedule/steps/0/step", "teleport"), "schedule.steps: step 1: unknown step kind 'teleport'");
  expectContains(with("/result/same_as", -3), "result.same_as: a config index cannot be negative, got -3");
  expectContains(with("/result/same_as", "config 3"), "result.same_as: expected an integer");
  {
    nlohmann::json j = good;
    j["result"]["same_as"] = 3;
    j["result"]["confirmed"] = true;
    expectContains(errorOf([&] { recordFromJson(j); }), "result.same_as: a confirmation is always measured");
    nlohmann::json bare = recordToJson(stepsRecord(matmulTask(), {}, okResult({1e-5})));
    bare["result"]["same_as"] = 3;
    expectContains(errorOf([&] { recordFromJson(bare); }), "result.same_as: names a config, and the record has none");
  }
  expectContains(errorOf([] { recordFromLine("{\"version\": 1,"); }), "not valid JSON");
  expectContains(errorOf([] { recordFromLine("[1, 2]"); }), "a record must be a JSON object");

  // JSON has no infinity: a record that cannot be written faithfully is refused.
  TuningRecord bad = stepsRecord(matmulTask(), {}, okResult({std::numeric_limits<double>::infinity()}));
  expectContains(errorOf([&] { recordToLine(bad); }), "result.costs is inf");
  // Invalid UTF-8 in a compiler message is replaced, never fatal.
  TuningRecord odd = stepsRecord(matmulTask(), {}, failedResult(MeasureErrorNo::CompileHostError, "bad byte \xff here"));
  EXPECT_EQ(recordFromLine(recordToLine(odd)).result.errorMessage, "bad byte \xEF\xBF\xBD here");
}

TEST(Records, ReplayedRecordGivesTheSameKernelSource) {
  auto task = matmulTask();
  std::string original = kernelSource(task->dag, tiledSteps());
  TempDir dir("tessel-records");
  std::string path = dir.path() + "/log.jsonl";
  {
    RecordLogWriter writer(path);
    writer.append(templateRecord(task, 1, {2e-5}));
  }
  auto file = readRecords(path);
  ASSERT_EQ(file.records.size(), 1u);
  // Rebuilt from nothing but the record: the DAG of its task, the steps it logged.
  EXPECT_EQ(file.records[0].task.workloadKey, ops::matmul(32, 32, 32).workloadKey());
  std::string replayed = kernelSource(ops::matmul(32, 32, 32), file.records[0].steps);
  EXPECT_EQ(replayed, original);
  expectContains(replayed, ", [&](int64_t ");  // a parallel loop: tessel_parallel_for with its body
}

// ---- the log file ----------------------------------------------------------------------------

TEST(RecordLog, TornLastLineAndGarbageAreSkippedAndCounted) {
  auto task = matmulTask();
  std::string a = recordToLine(templateRecord(task, 1, {3e-5}));
  std::string b = recordToLine(templateRecord(task, 2, {2e-5}));
  std::string c = recordToLine(templateRecord(task, 3, {1e-5}));
  TempDir dir("tessel-records");
  // Line 2 is garbage, line 3 blank, line 5 a valid JSON object that is not a record, line 7
  // the start of a record cut by a kill.
  std::string text = a + "\n" + "%%% not a record %%%\n" + "\n" + b + "\n" + "{\"hello\": 1}\n" + c + "\n" +
                     b.substr(0, b.size() / 2);
  auto file = readRecords(writeText(dir, "log.jsonl", text));
  EXPECT_EQ(file.report.lines, 7);
  EXPECT_EQ(file.report.good, 3);
  ASSERT_EQ(file.records.size(), 3u);
  EXPECT_EQ(file.records[2].config->index, 3);
  ASSERT_EQ(file.report.skipped.size(), 3u);
  EXPECT_EQ(file.report.skipped[0].lineNumber, 2);
  EXPECT_FALSE(file.report.skipped[0].torn);
  expectContains(file.report.skipped[0].reason, "not valid JSON");
  EXPECT_EQ(file.report.skipped[1].lineNumber, 5);
  expectContains(file.report.skipped[1].reason, "missing field 'version'");
  EXPECT_EQ(file.report.skipped[2].lineNumber, 7);
  EXPECT_TRUE(file.report.skipped[2].torn);
  std::string warning = file.report.describeSkipped();
  expectContains(warning, "skipped 3 of 7 lines: line 2: not valid JSON");
  expectContains(warning, "line 7 (torn last line)");

  // A complete last record that lost only its newline is kept.
  auto noNewline = parseRecords(a + "\n" + c);
  EXPECT_EQ(noNewline.report.good, 2);
  EXPECT_TRUE(noNewline.report.skipped.empty());
  EXPECT_EQ(noNewline.report.describeSkipped(), "");

  expectContains(errorOf([&] { readRecords(dir.path() + "/missing.jsonl"); }), "missing.jsonl");
  expectContains(errorOf([&] { readRecords(dir.path()); }), "is a directory");
}

TEST(RecordLog, WritersAppendAndHealATornEnd) {
  auto task = matmulTask();
  TempDir dir("tessel-records");
  std::string path = dir.path() + "/log.jsonl";
  {
    RecordLogWriter first(path);
    first.append(templateRecord(task, 1, {3e-5}));
    first.append(templateRecord(task, 2, {2e-5}));
    EXPECT_EQ(first.written(), 2);
    // Already in the file while the writer is open: nothing is buffered in the process.
    EXPECT_EQ(readRecords(path).records.size(), 2u);
  }
  {
    RecordLogWriter second(path, RecordLogWriterOptions{/*fsync=*/true});
    second.append(templateRecord(task, 3, {1e-5}));
  }
  auto file = readRecords(path);
  ASSERT_EQ(file.records.size(), 3u);
  EXPECT_EQ(file.records[0].config->index, 1);
  EXPECT_EQ(file.records[2].config->index, 3);

  // A run killed mid-line leaves no newline; the next writer must not glue its record to it.
  {
    std::ofstream out(path, std::ios::app);
    out << "{\"version\":1,\"tar";
  }
  {
    RecordLogWriter third(path);
    third.append(templateRecord(task, 4, {4e-5}));
  }
  file = readRecords(path);
  EXPECT_EQ(file.report.good, 4);
  ASSERT_EQ(file.report.skipped.size(), 1u);
  EXPECT_EQ(file.report.skipped[0].lineNumber, 4);
  EXPECT_EQ(file.records[3].config->index, 4);

  expectContains(errorOf([&] { RecordLogWriter w(dir.path() + "/no/such/dir/log.jsonl"); }), "no/such/dir/log.jsonl");
}

TEST(RecordLog, AWriterKilledWithSigkillLosesNothingWritten) {
  auto task = matmulTask();
  TuningRecord record = templateRecord(task, 1, {1e-5});
  TempDir dir("tessel-records");
  std::string path = dir.path() + "/log.jsonl";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RecordLogWriter writer(path);
    for (int64_t i = 0;; ++i) {
      record.config->index = i;
      writer.append(record);
    }
  }
  // Kill it at some point mid-stream, as a user's Ctrl-\ or the OOM killer would.
  int lines = 0;
  for (int attempt = 0; attempt < 2000 && lines < 200; ++attempt) {
    ::usleep(1000);
    std::ifstream in(path);
    lines = int(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto file = readRecords(path);
  ASSERT_GE(file.report.good, 200);
  // Every trial before the kill is there, in order; at most the line being written is torn.
  for (int i = 0; i < file.report.good; ++i) {
    ASSERT_EQ(file.records[size_t(i)].config->index, i);
  }
  ASSERT_LE(file.report.skipped.size(), 1u);
  if (!file.report.skipped.empty()) {
    EXPECT_TRUE(file.report.skipped[0].torn);
  }
  {
    RecordLogWriter resumed(path);
    resumed.append(templateRecord(task, 99999, {1e-5}));
  }
  auto after = readRecords(path);
  EXPECT_EQ(after.report.good, file.report.good + 1);
  EXPECT_EQ(after.records.back().config->index, 99999);
}

// ---- queries ---------------------------------------------------------------------------------

TEST(RecordQueries, TheLatestConfirmedDecisionRanksFirst) {
  auto t32 = matmulTask(32);
  auto confirmedRecord = [&](int64_t index, double cost) {
    TuningRecord r = templateRecord(t32, index, {cost, cost});
    r.result.confirmed = true;
    return r;
  };
  std::vector<TuningRecord> records = {
      templateRecord(t32, 0, {4e-5}),
      confirmedRecord(1, 3e-5),
      templateRecord(t32, 2, {1e-5}),  // fastest once, but never confirmed: a lucky sample
      confirmedRecord(3, 3.5e-5),      // the latest decision wins, though slower than the first one
      templateRecord(t32, 4, {2e-5, 9e-5, 2e-5}),
  };
  auto best = bestRecords(records);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config->index, 3);
  auto top = topRecords(records, 5);
  ASSERT_EQ(top.size(), 5u);
  std::vector<int64_t> order;
  for (auto& r : top) order.push_back(r.config->index);
  EXPECT_EQ(order, (std::vector<int64_t>{3, 1, 2, 4, 0}));  // decisions, then by median cost
  HistoryBest history(records, target::Target::parse("cpu"));
  EXPECT_EQ(history.find(t32->workloadKey)->config->index, 3);
}

TEST(RecordQueries, OfATemplateDecisionAndAnAutoSchedulerDecisionTheFasterRanksFirst) {
  auto t32 = matmulTask(32);
  TuningRecord templateDecision = templateRecord(t32, 1, {3e-5, 3e-5});
  templateDecision.result.confirmed = true;
  auto autoDecision = [&](double cost) {
    TuningRecord r = stepsRecord(t32, {}, MeasureResult{});
    r.result.costs = {cost, cost};
    r.result.confirmed = true;
    return r;
  };
  // The auto-scheduler's decision is later and faster: it wins.
  std::vector<TuningRecord> records = {autoDecision(9e-5), templateDecision, templateRecord(t32, 2, {1e-5}), autoDecision(2e-5)};
  auto top = topRecords(records, 4);
  ASSERT_EQ(top.size(), 4u);
  EXPECT_FALSE(top[0].task.fromTemplate());
  EXPECT_DOUBLE_EQ(top[0].cost(), 2e-5);
  EXPECT_EQ(top[1].config->index, 1);        // the template's decision
  EXPECT_DOUBLE_EQ(top[2].cost(), 9e-5);     // an older decision of the auto-scheduler
  EXPECT_EQ(top[3].config->index, 2);        // unconfirmed: last, however fast
  // A slower auto-scheduler decision ranks after the template's, though it is the latest.
  records.push_back(autoDecision(4e-5));
  EXPECT_EQ(bestRecords(records)[0].config->index, 1);
}

TEST(RecordQueries, BestPerTaskIgnoresErrorsAndKeepsTheEarliestOfATie) {
  auto t32 = matmulTask(32), t16 = matmulTask(16), t32native = matmulTask(32, "cpu -mcpu=native");
  std::vector<TuningRecord> records = {
      templateRecord(t32, 0, {5e-5, 5e-5}),
      stepsRecord(t32, {}, failedResult(MeasureErrorNo::WrongAnswerError, "wrong")),  // would be "fastest"
      templateRecord(t16, 0, {9e-6}),
      templateRecord(t32, 1, {1e-5, 3e-5}),    // median 2e-5: the best of t32
      templateRecord(t32, 2, {2.5e-5, 1.5e-5}),  // median 2e-5 as well: later, so not picked
      templateRecord(t32native, 7, {1e-6}),
      templateRecord(t16, 1, {8e-6}),
      stepsRecord(matmulTask(8), {}, failedResult(MeasureErrorNo::CompileHostError, "no")),
  };
  auto best = bestRecords(records);
  ASSERT_EQ(best.size(), 3u);  // the 8x8 task has no valid record
  EXPECT_EQ(best[0].task.workloadKey, t32->workloadKey);
  EXPECT_EQ(best[0].target, "cpu");
  EXPECT_EQ(best[0].config->index, 1);
  EXPECT_EQ(best[1].task.workloadKey, t16->workloadKey);
  EXPECT_EQ(best[1].config->index, 1);
  EXPECT_EQ(best[2].target, "cpu -mcpu=native");

  auto top = topRecords(records, 2);
  ASSERT_EQ(top.size(), 5u);
  EXPECT_EQ(top[0].config->index, 1);
  EXPECT_EQ(top[1].config->index, 2);
  EXPECT_EQ(top[2].config->index, 1);
  EXPECT_EQ(top[3].config->index, 0);
  expectContains(errorOf([&] { topRecords(records, 0); }), "at least 1");

  EXPECT_EQ(recordsOfTask(records, t32->workloadKey, "cpu").size(), 4u);
  EXPECT_EQ(recordsOfTask(records, t32->workloadKey, "cpu -mcpu=native").size(), 1u);

  // A candidate is its steps: the template records here all replay the same tiled schedule,
  // whatever their index.
  std::string tiled = schedule::stepsToJson(tiledSteps()).dump();
  auto measured = measuredCandidates(records);
  EXPECT_EQ(measured[t32->key()], (std::set<std::string>{tiled, "[]"}));
  EXPECT_EQ(measured[t16->key()], (std::set<std::string>{tiled}));
  EXPECT_EQ(candidateKey(tiledSteps()), tiled);
  EXPECT_EQ(t32->key(), records[0].taskKey());
}

// A config's index counts in its template's space of the day: after a knob is added, index 1
// is another schedule. Two records of index 1 with different steps (written by two versions of
// the template) are two candidates, not one already measured.
TEST(RecordQueries, ACandidateIsItsStepsNotItsConfigIndex) {
  auto task = matmulTask(32);
  TuningRecord before = templateRecord(task, 1, {1e-5});
  TuningRecord after = templateRecord(task, 1, {2e-5});
  after.steps.pop_back();  // not vectorized: another schedule under the same index
  EXPECT_NE(candidateKey(before), candidateKey(after));
  EXPECT_EQ(measuredCandidates({before, after})[task->key()].size(), 2u);
  TuningRecord renumbered = templateRecord(task, 7, {3e-5});  // the same schedule, counted in a larger space
  EXPECT_EQ(candidateKey(before), candidateKey(renumbered));
}

// A copy (result.same_as: a config whose steps an earlier record of the log measured, logged
// without being measured again) is never ranked: best and distill keep its original, and a
// distilled log holds each schedule once.
TEST(RecordQueries, CopiesAreNeverRanked) {
  auto task = matmulTask(32);
  TuningRecord original = templateRecord(task, 1, {2e-5});
  TuningRecord copy = templateRecord(task, 2, {2e-5});
  copy.result.sameAs = 1;
  TuningRecord other = templateRecord(task, 3, {3e-5});
  other.steps.pop_back();  // another schedule
  auto top = topRecords({original, copy, other}, 5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].config->index, 1);
  EXPECT_EQ(top[1].config->index, 3);
  ASSERT_EQ(bestRecords({original, copy}).size(), 1u);
  EXPECT_EQ(bestRecords({original, copy})[0].config->index, 1);
}

// ---- apply history best ----------------------------------------------------------------------

TEST(HistoryBest, DispatchesTheBestRecordOrTheFallback) {
  auto task = matmulTask(32);
  std::vector<StepPtr> slower = {step<schedule::SplitStep>("C", "i", std::vector<int64_t>{4})};
  std::vector<TuningRecord> records = {stepsRecord(task, slower, okResult({4e-5})), templateRecord(task, 9, {1e-5}),
                                       stepsRecord(matmulTask(32, "cpu -mcpu=native"), {}, okResult({1e-7})),
                                       stepsRecord(matmulTask(32, "cuda"), {}, okResult({1e-8}))};
  HistoryBest history(records, target::Target::parse("cpu"));
  EXPECT_EQ(history.size(), 1u);
  ASSERT_NE(history.find(task->workloadKey), nullptr);
  EXPECT_EQ(history.find(task->workloadKey)->config->index, 9);  // the exact target wins

  int fallbackCalls = 0;
  std::vector<StepPtr> fallbackSteps = {step<schedule::AnnotateStep>("C", "i", schedule::Annotation::Parallel)};
  auto provider = history.provider([&](const te::ComputeDAG&) {
    ++fallbackCalls;
    return fallbackSteps;
  });
  // The same computation built elsewhere: equal workload key, so the record applies.
  auto steps = provider(ops::matmul(32, 32, 32));
  EXPECT_EQ(schedule::stepsToJson(steps), schedule::stepsToJson(tiledSteps()));
  provider(ops::matmul(32, 32, 32));
  EXPECT_EQ(fallbackCalls, 0);
  auto other = provider(ops::matmul(16, 16, 16));
  EXPECT_EQ(fallbackCalls, 1);
  EXPECT_EQ(schedule::stepsToJson(other), schedule::stepsToJson(fallbackSteps));

  auto uses = history.uses();
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_TRUE(uses[0].fromRecord);
  EXPECT_EQ(uses[0].requests, 2);
  EXPECT_EQ(uses[0].cost, 1e-5);
  EXPECT_FALSE(uses[1].fromRecord);
  EXPECT_EQ(uses[1].name, "C");
  EXPECT_EQ(uses[1].note, "no record");
  EXPECT_EQ(history.summary(), "applied tuned records to 1 of 2 workloads; fallback for 1: C (no record)");

  // Only records of a different target string: one of the same kind applies ("llvm" is "cpu").
  HistoryBest nativeOnly({records[2], records[3]}, target::Target::parse("llvm -mcpu=skylake"));
  EXPECT_EQ(nativeOnly.find(task->workloadKey)->target, "cpu -mcpu=native");
  nativeOnly.provider()(ops::matmul(32, 32, 32));
  EXPECT_EQ(nativeOnly.uses()[0].note, "measured on target 'cpu -mcpu=native'");
  EXPECT_EQ(target::targetKindName("cpu -mcpu=native"), "cpu");
  EXPECT_EQ(target::targetKindName("llvm -mcpu=haswell"), "cpu");
  EXPECT_EQ(target::targetKindName("cuda -arch=sm_90"), "cuda");
  EXPECT_EQ(target::targetKindName("tpu -v=9"), "tpu");  // a record of a kind this tessel does not know is kept apart

  // Records whose steps do not replay on the DAG (same structure, other loop names) are
  // passed over for the next best record that does, with the reason; with none, the build
  // falls back instead of failing.
  auto a = te::placeholder({32, 32}, DataType::float32(), "X");
  auto b = te::placeholder({32, 32}, DataType::float32(), "Y");
  auto rk = te::reduceAxis(32, "r");
  auto z = te::compute({32, 32}, [&](const std::vector<te::Var>& i) { return te::sum(a(i[0], rk.var) * b(rk.var, i[1]), {rk}); },
                       "Z", "matmul", {"u", "v"});
  te::ComputeDAG renamed({z}, {a, b});
  ASSERT_EQ(renamed.workloadKey(), task->workloadKey);
  HistoryBest again(records, target::Target::parse("cpu"));
  auto next = again.provider()(renamed);
  EXPECT_TRUE(next.empty());  // the 1e-7 record measured on -mcpu=native: an empty step list replays anywhere
  ASSERT_EQ(again.uses().size(), 1u);
  EXPECT_TRUE(again.uses()[0].fromRecord);
  EXPECT_EQ(again.uses()[0].cost, 1e-7);
  expectContains(again.uses()[0].note, "2 preferred records did not apply: step 1 (cache_write)");
  HistoryBest none({records[0], records[1]}, target::Target::parse("cpu"));
  EXPECT_TRUE(none.provider()(renamed).empty());  // no fallback given: no steps
  EXPECT_FALSE(none.uses()[0].fromRecord);
  expectContains(none.uses()[0].note, "2 records and none applies: step 1 (cache_write)");
}

// A fallback says why the workload's records were of no use: "no record" only when it has none
// (issue 39, defect 13: records of another kind of target, or only failed ones, read as none).
TEST(HistoryBest, AFallbackSaysWhyTheRecordsThereAreWereOfNoUse) {
  auto t16 = matmulTask(16), t8 = matmulTask(8);
  std::vector<TuningRecord> records = {stepsRecord(matmulTask(32, "cuda -arch=sm_90"), {}, okResult({1e-6})),
                                       stepsRecord(t16, {}, failedResult(MeasureErrorNo::RuntimeDeviceError, "x")),
                                       stepsRecord(t16, {}, failedResult(MeasureErrorNo::RuntimeDeviceError, "y")),
                                       stepsRecord(t8, {}, failedResult(MeasureErrorNo::RuntimeDeviceError, "x")),
                                       stepsRecord(matmulTask(8, "opencl"), {}, okResult({1e-6}))};
  HistoryBest history(records, target::Target::parse("cpu"));
  auto provider = history.provider();
  for (int64_t n : {32, 16, 8, 4}) provider(ops::matmul(n, n, n));
  auto uses = history.uses();
  ASSERT_EQ(uses.size(), 4u);
  EXPECT_EQ(uses[0].note, "no record for cpu targets, only for cuda -arch=sm_90");
  EXPECT_EQ(uses[1].note, "its 2 records for cpu are all failed measurements");
  EXPECT_EQ(uses[2].note, "its 1 record for cpu is a failed measurement; no record for cpu targets, only for opencl");
  EXPECT_EQ(uses[3].note, "no record");
  for (const auto& u : uses) EXPECT_FALSE(u.fromRecord);
  expectContains(history.summary(), "applied tuned records to 0 of 4 workloads; fallback for 4: C (no record for cpu targets");
}

// Shipped records fill only the workloads the user's records leave out, even when faster: they
// were measured on another machine. One that does not replay is skipped with its reason.
TEST(HistoryBest, ShippedRecordsFillOnlyWhatTheUsersRecordsLeaveOut) {
  auto t32 = matmulTask(32), t16 = matmulTask(16), t8 = matmulTask(8);
  std::vector<TuningRecord> mine = {templateRecord(t32, 1, {4e-5}), stepsRecord(t8, {}, failedResult(MeasureErrorNo::RuntimeDeviceError, "x"))};
  std::vector<StepPtr> broken = {step<schedule::SplitStep>("C", "nowhere", std::vector<int64_t>{4})};
  std::vector<TuningRecord> shipped = {templateRecord(t32, 2, {1e-6}), templateRecord(t16, 3, {1e-6}), stepsRecord(t8, broken, okResult({1e-6}))};
  std::set<std::string> added;
  auto merged = withShippedRecords(mine, shipped, &added);
  EXPECT_EQ(merged.size(), 4u);
  EXPECT_EQ(added, (std::set<std::string>{t16->workloadKey, t8->workloadKey}));  // a failed trial covers nothing

  HistoryBest history(mine, target::Target::parse("cpu"), shipped);
  EXPECT_EQ(history.find(t32->workloadKey)->config->index, 1);
  EXPECT_EQ(history.find(t16->workloadKey)->config->index, 3);
  auto provider = history.provider();
  provider(ops::matmul(32, 32, 32));
  provider(ops::matmul(16, 16, 16));
  provider(ops::matmul(8, 8, 8));
  auto uses = history.uses();
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_TRUE(uses[0].fromRecord && !uses[0].shipped);
  EXPECT_TRUE(uses[1].fromRecord && uses[1].shipped);
  EXPECT_TRUE(!uses[2].fromRecord && uses[2].shipped);
  expectContains(uses[2].note, "1 record and none applies: step 1 (split)");
  expectContains(history.summary(), "applied tuned records to 2 of 3 workloads (1 shipped with tessel); fallback for 1: C");
}

// A record whose products round their operands to TF32 serves only a target that allows it
// (cuda -matmul-precision=tf32); an fp32-accurate one serves both. Records refused for their
// precision cover nothing: the shipped records still fill their workloads.
TEST(HistoryBest, ARecordInTf32ServesOnlyATargetThatAllowsIt) {
  const std::string tf32Target = "cuda -matmul-precision=tf32";
  auto tensorized = [](const char* intrinsic) {
    return std::vector<StepPtr>{step<schedule::SplitStep>("C", "k", std::vector<int64_t>{8}),
                                step<schedule::TensorizeStep>("C", "k.1", intrinsic)};
  };
  auto intrinsicOf = [](const TuningRecord* r) {
    return r ? std::dynamic_pointer_cast<const schedule::TensorizeStep>(r->steps.back())->intrinsic : std::string("none");
  };
  auto t32 = matmulTask(32, tf32Target), t16 = matmulTask(16, tf32Target), t8 = matmulTask(8, tf32Target);
  std::vector<TuningRecord> mine = {stepsRecord(t32, tensorized("mma_m16n8k8_tf32"), okResult({1e-6})),
                                    stepsRecord(matmulTask(32, "cuda"), tensorized("mma_m16n8k8_3xtf32"), okResult({2e-6})),
                                    stepsRecord(t16, tensorized("mma_m16n8k8_tf32"), okResult({1e-6})),
                                    stepsRecord(t8, tensorized("mma_m16n8k8_tf32"), okResult({1e-6}))};
  std::vector<TuningRecord> shipped = {stepsRecord(matmulTask(16, "cuda"), tensorized("mma_m16n8k8_3xtf32"), okResult({3e-6}))};

  HistoryBest tf32(mine, target::Target::parse(tf32Target), shipped);
  EXPECT_EQ(intrinsicOf(tf32.find(t32->workloadKey)), "mma_m16n8k8_tf32");
  EXPECT_EQ(intrinsicOf(tf32.find(t16->workloadKey)), "mma_m16n8k8_tf32");

  HistoryBest fp32(mine, target::Target::parse("cuda"), shipped);
  EXPECT_EQ(intrinsicOf(fp32.find(t32->workloadKey)), "mma_m16n8k8_3xtf32");
  EXPECT_EQ(intrinsicOf(fp32.find(t16->workloadKey)), "mma_m16n8k8_3xtf32");  // the shipped one
  EXPECT_EQ(fp32.find(t8->workloadKey), nullptr);
  auto provider = fp32.provider();
  provider(ops::matmul(8, 8, 8));
  ASSERT_EQ(fp32.uses().size(), 1u);
  EXPECT_FALSE(fp32.uses()[0].fromRecord);
  EXPECT_EQ(fp32.uses()[0].note, "its 1 record rounds products to TF32, which target 'cuda' does not allow (-matmul-precision=tf32 does)");
  // A damaged record's unknown instruction is not TF32's: it is kept, and its replay in the build says why it fails.
  HistoryBest damaged({stepsRecord(t8, tensorized("mma_m16n8k8_unknown"), okResult({1e-6}))}, target::Target::parse("cuda"));
  EXPECT_NE(damaged.find(t8->workloadKey), nullptr);
}

TEST(MeasureOptions, ATf32TargetsCandidatesMayDifferByTf32sError) {
  MeasureOptions o;
  EXPECT_EQ(o.toleranceFor(target::Target::parse("cuda")), 1e-4);
  EXPECT_EQ(o.toleranceFor(target::Target::parse("cpu")), 1e-4);
  EXPECT_EQ(o.toleranceFor(target::Target::parse("cuda -matmul-precision=tf32")), 4e-3);  // 2^-10 per product, four times
  o.tolerance = 1e-2;  // a looser tolerance asked for stays
  EXPECT_EQ(o.toleranceFor(target::Target::parse("cuda -matmul-precision=tf32")), 1e-2);
}

#ifdef TESSEL_CLI_PATH
#include "common/TesselCli.h"

using tessel::testsupport::tesselCli;

// ---- the CLI ---------------------------------------------------------------------------------

TEST(RecordsCli, ShowAndBest) {
  auto t32 = matmulTask(32), t16 = matmulTask(16);
  TempDir dir("tessel-records");
  std::string log = dir.path() + "/tune.log";
  {
    RecordLogWriter writer(log);
    writer.append(templateRecord(t32, 1, {2e-5}));
    writer.append(stepsRecord(t32, {}, failedResult(MeasureErrorNo::RunTimeoutError, "timeout")));
    writer.append(stepsRecord(t32, {}, failedResult(MeasureErrorNo::RunTimeoutError, "timeout")));
    writer.append(templateRecord(t32, 2, {6.5536e-6}));  // 65536 FLOPs / 6.5536 us = 10 GFLOPS
    TuningRecord copy = templateRecord(t32, 3, {6.5536e-6});  // config 2's steps: not measured again
    copy.result.sameAs = 2;
    writer.append(copy);
    writer.append(stepsRecord(t16, {step<schedule::SplitStep>("C", "i", std::vector<int64_t>{4})}, okResult({1e-6})));
    writer.append(stepsRecord(t16, {}, failedResult(MeasureErrorNo::WrongAnswerError, "wrong")));
  }
  {
    std::ofstream out(log, std::ios::app);
    out << "{\"version\":1,\"target\":\"c";  // torn by a kill
  }

  auto show = runSubprocess({tesselCli(), "records", "show", log});
  ASSERT_TRUE(show.ok()) << show.output;
  expectContains(show.output, "warning: " + log + ": skipped 1 of 8 lines: line 8 (torn last line)");
  expectContains(show.output, "7 records of 2 tasks (1 line skipped); 1 of them a copy of a measured schedule, not measured again");
  expectContains(show.output, t32->workloadKey);
  expectContains(show.output, "2 RunTimeoutError");
  expectContains(show.output, "1 WrongAnswerError");
  expectContains(show.output, "10.00");    // the best GFLOPS of the 32x32 task
  expectContains(show.output, "0.0066 ms");
  expectContains(show.output, "matmul: template dense_pack.x86 config 2 [[\"tile_y\",\"sp\",[-1,8]],[\"unroll\",\"ot\",true]]");
  expectContains(show.output, "matmul: 1 step\n       C.split(");

  std::string out = dir.path() + "/best.log";
  auto best = runSubprocess({tesselCli(), "records", "best", log, "-o", out});
  ASSERT_TRUE(best.ok()) << best.output;
  expectContains(best.output, "kept 2 of 7 records (2 tasks) in " + out);
  auto kept = readRecords(out);
  EXPECT_TRUE(kept.report.skipped.empty());
  ASSERT_EQ(kept.records.size(), 2u);
  EXPECT_EQ(kept.records[0].config->index, 2);
  EXPECT_EQ(kept.records[1].task.workloadKey, t16->workloadKey);

  auto again = runSubprocess({tesselCli(), "records", "best", log, "-o", out});
  EXPECT_EQ(again.exitCode, 1);
  expectContains(again.output, "exists; pass --force to replace it");

  auto distill = runSubprocess({tesselCli(), "records", "distill", log, "-o", out, "--top", "5", "--force"});
  ASSERT_TRUE(distill.ok()) << distill.output;
  expectContains(distill.output, "kept 3 of 7 records (2 tasks)");  // the copy left out

  auto missing = runSubprocess({tesselCli(), "records", "show", dir.path() + "/nope.log"});
  EXPECT_EQ(missing.exitCode, 1);
  expectContains(missing.output, "error: cannot read records log " + dir.path() + "/nope.log");
}
#endif

}  // namespace

TEST(PlausibleCost, TimingsADeviceCannotHaveMeasuredAreErrorsAndNeverRanked) {
  auto task = matmulTask(32);  // 2 x 32^3 FLOPs
  ASSERT_DOUBLE_EQ(task->dag.flopCount(), 65536);
  double peak = 100;  // GFLOPS: the task takes at least 655 ns; twice the peak (328 ns) still passes
  EXPECT_EQ(implausibleCosts(okResult({7e-7}), *task, peak), "");
  EXPECT_EQ(implausibleCosts(okResult({3.3e-7}), *task, peak), "");
  std::string over = implausibleCosts(okResult({1e-3, 1e-7}), *task, peak);  // the fastest repeat counts
  expectContains(over, "1e-07 s per call is 655 GFLOPS for the 65536 FLOPs of task 'matmul'");
  expectContains(over, "over 2x the device's peak of 100 GFLOPS");
  // Below the floor every record must clear, whatever the peak (0: unknown, a GPU server).
  EXPECT_EQ(implausibleCosts(okResult({1e-8}), *task, 0), "");
  expectContains(implausibleCosts(okResult({1e-12}), *task, 0), "less than any kernel call takes (1e-09 s)");
  expectContains(implausibleCosts(okResult({-1.0}), *task, 0), "is no measurement");
  expectContains(implausibleCosts(okResult({std::nan("")}), *task, 0), "is no measurement");
  EXPECT_EQ(implausibleCosts(failedResult(MeasureErrorNo::RuntimeDeviceError, "crashed"), *task, peak), "");
  // int8 elements fill four times the lanes of fp32.
  auto int8 = makeMeasureTask("matmul_int8", ops::matmul(32, 32, 32, DataType::int8()));
  EXPECT_DOUBLE_EQ(peakGflopsFor(*int8, peak), 400);
  EXPECT_EQ(implausibleCosts(okResult({1e-7}), *int8, peak), "");

  // A rogue device's answer becomes an error record; the log's best is the honest one.
  MeasureResult rogue = okResult({1e-9, 1e-9});
  refuseImplausibleCosts(rogue, *task, peak, "the device server at 10.0.0.9:9090");
  EXPECT_EQ(rogue.errorNo, MeasureErrorNo::RuntimeDeviceError);
  expectContains(rogue.errorMessage, "implausible timing from the device server at 10.0.0.9:9090: a cost of 1e-09 s");
  EXPECT_TRUE(rogue.costs.empty());
  MeasureResult honest = okResult({4e-5});
  refuseImplausibleCosts(honest, *task, peak, "this machine");
  ASSERT_TRUE(honest.ok());
  std::vector<TuningRecord> records = {stepsRecord(task, tiledSteps(), honest), stepsRecord(task, {}, rogue)};
  TuningRecord read = recordFromLine(recordToLine(records[1]));  // written and read back like any error
  EXPECT_EQ(read.result.errorNo, MeasureErrorNo::RuntimeDeviceError);
  auto best = bestRecords(records);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_DOUBLE_EQ(best[0].cost(), 4e-5);
}
