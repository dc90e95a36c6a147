#include "cli/RecordsCommand.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>

#include "cli/ModelArgs.h"
#include "cli/OptionChecks.h"
#include "cli/RecordsPlot.h"
#include "support/Error.h"
#include "support/Files.h"
#include "tune/RecordLog.h"
#include "tune/RecordQueries.h"
#include "tune/ShippedRecords.h"
#include "vta/HardwareConfig.h"

namespace tessel::cli {

namespace {

struct RecordsArgs {
  std::string log, output, target = "cpu", vtaConfig;
  int top = 1;
  bool force = false, steps = false;
};

tune::RecordFile readLog(const std::string& path) {
  auto file = tune::readRecords(path);
  tune::warnSkippedLines(file, path);
  return file;
}

/// What show prints about one task.
struct TaskSummary {
  const tune::TuningRecord* first = nullptr;
  const tune::TuningRecord* best = nullptr;
  int trials = 0;
  std::map<int, int> errors;  ///< error number -> count
};

std::string errorsText(const std::map<int, int>& errors) {
  if (errors.empty()) return "-";
  std::string text;
  for (auto [number, count] : errors)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", count, tune::measureErrorName(tune::MeasureErrorNo(number)));
  return text;
}

/// "1 line", "2 lines".
std::string counted(size_t count, const char* noun) { return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s"); }

std::string indented(const std::string& text, const std::string& indent) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += indent + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

/// Warns about records left out of a ranking because they do not replay.
void warnRejected(const std::vector<tune::RejectedRecord>& rejected) {
  for (const auto& r : rejected) fmt::print(stderr, "warning: {}; it is not ranked\n", r.describe());
}

void show(const RecordsArgs& a) {
  auto file = readLog(a.log);
  std::vector<tune::RejectedRecord> rejected;
  std::unordered_map<std::string, tune::TuningRecord> bestOfTask;
  for (auto& r : tune::bestRecords(file.records, &rejected)) bestOfTask.emplace(r.taskKey(), std::move(r));
  warnRejected(rejected);
  std::vector<TaskSummary> tasks;
  std::unordered_map<std::string, size_t> slot;
  size_t copies = 0;
  for (const auto& r : file.records) {
    auto [it, inserted] = slot.try_emplace(r.taskKey(), tasks.size());
    if (inserted) tasks.push_back({&r, nullptr, 0, {}});
    TaskSummary& t = tasks[it->second];
    ++t.trials;
    if (!r.ok()) ++t.errors[int(r.result.errorNo)];
    copies += r.result.sameAs.has_value();
  }
  for (auto& t : tasks)
    if (auto it = bestOfTask.find(t.first->taskKey()); it != bestOfTask.end()) t.best = &it->second;
  // A copy is a trial of its run (a config whose steps an earlier one had), not a measurement.
  fmt::print("{}: {} of {}{}{}\n", a.log, counted(file.records.size(), "record"), counted(tasks.size(), "task"),
             file.report.skipped.empty() ? "" : fmt::format(" ({} skipped)", counted(file.report.skipped.size(), "line")),
             copies == 0 ? ""
                         : fmt::format("; {} of them {} of a measured schedule, not measured again", copies,
                                       copies == 1 ? "a copy" : "copies"));
  if (tasks.empty()) return;
  size_t nameWidth = 4;
  for (const auto& t : tasks) nameWidth = std::max(nameWidth, t.first->task.name.size());
  fmt::print("{:>3}  {:<{}}  {:>6}  {:>11}  {:>12}  {:<32}  {:<8}  {}\n", "#", "task", nameWidth, "trials", "best GFLOPS",
             "best latency", "workload key", "target", "errors");
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskSummary& t = tasks[i];
    std::string gflops = t.best ? fmt::format("{:.2f}", t.best->gflops()) : "-";
    std::string latency = t.best ? fmt::format("{:.4f} ms", t.best->cost() * 1e3) : "-";
    fmt::print("{:>3}  {:<{}}  {:>6}  {:>11}  {:>12}  {:<32}  {:<8}  {}\n", i + 1, t.first->task.name, nameWidth, t.trials, gflops,
               latency, t.first->task.workloadKey, t.first->target, errorsText(t.errors));
  }
  fmt::print("best configs:\n");
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskSummary& t = tasks[i];
    if (!t.best) {
      fmt::print("{:>3}  {}: no valid trial\n", i + 1, t.first->task.name);
      continue;
    }
    const auto& best = *t.best;
    if (best.config) {
      fmt::print("{:>3}  {}: template {} config {} {}\n", i + 1, best.task.name, best.task.templateName, best.config->index,
                 best.config->entity.dump());
    } else {
      fmt::print("{:>3}  {}: {}\n", i + 1, best.task.name, counted(best.steps.size(), "step"));
    }
    // A template's config says it all in one line; a bare step list is the config itself.
    if (a.steps || !best.config) fmt::print("{}", indented(schedule::printSteps(best.steps), "       "));
  }
}

void writeKept(const RecordsArgs& a, int perTask) {
  checkOutputFile(a.output, a.force);
  auto file = readLog(a.log);
  std::vector<tune::RejectedRecord> rejected;
  auto kept = tune::topRecords(file.records, perTask, &rejected);
  warnRejected(rejected);
  std::map<std::string, int> keptOfTask;
  for (const auto& r : kept) ++keptOfTask[r.taskKey()];
  std::vector<std::string> withoutValid;
  std::map<std::string, bool> seen;
  for (const auto& r : file.records)
    if (!seen[r.taskKey()]) {
      seen[r.taskKey()] = true;
      if (!keptOfTask.count(r.taskKey())) withoutValid.push_back(fmt::format("{} ({})", r.task.name, r.task.workloadKey));
    }
  tune::writeRecordLog(a.output, kept);
  fmt::print("kept {} of {} ({}) in {}\n", kept.size(), counted(file.records.size(), "record"), counted(keptOfTask.size(), "task"),
             a.output);
  for (const auto& t : withoutValid) fmt::print(stderr, "warning: task {} has no valid record; it is left out\n", t);
}

/// The shipped log a build for the target uses: its CPU class's, its CUDA architecture's or its
/// VTA configuration's; empty for a kind of target nothing is shipped for (OpenCL).
std::string shippedSetFor(const RecordsArgs& a) {
  if (isVtaTarget(a.target))
    return "vta/" + (a.vtaConfig.empty() ? vta::HardwareConfig{} : vta::HardwareConfig::fromFile(a.vtaConfig)).modelName();
  TESSEL_CHECK(a.vtaConfig.empty(), "--vta-config applies to --target vta");
  target::Target target = target::Target::parse(a.target);
  return target.isGpu() ? tune::shippedRecordSetForGpu(target) : tune::shippedRecordSetForCpu(target);
}

/// The shipped logs, and which one a build for `target` uses.
void listShipped(const RecordsArgs& a) {
  std::string used = shippedSetFor(a);
  fmt::print("records shipped with tessel (records/ in its repository):\n");
  bool shipped = false;
  for (const std::string& set : tune::shippedRecordSets()) {
    std::set<std::string> workloads;
    for (const auto& r : tune::shippedRecords(set)) workloads.insert(r.task.workloadKey);
    shipped = shipped || set == used;
    fmt::print("  {:<36} {:>4} workloads\n", set, workloads.size());
  }
  if (used.empty())
    fmt::print("target {}: none (tessel ships no records for this kind of device: its kernels take the default schedules "
               "unless given records)\n",
               a.target);
  else
    fmt::print("target {}: {} ({})\n", a.target, used,
               shipped ? "shipped" : "not shipped: its kernels take the default schedules unless given records");
}

}  // namespace

void addRecordsCommands(CLI::App& app) {
  CLI::App* records = app.add_subcommand("records", "inspect and reduce tuning records logs");
  records->require_subcommand(1);

  auto showArgs = std::make_shared<RecordsArgs>();
  CLI::App* showCommand = records->add_subcommand("show", "summarize a log per task: trials, errors, best GFLOPS and config");
  showCommand->add_option("log", showArgs->log, "the records log")->required();
  showCommand->add_flag("--steps", showArgs->steps, "print the step list of every best record");
  showCommand->callback([showArgs] { show(*showArgs); });

  auto bestArgs = std::make_shared<RecordsArgs>();
  CLI::App* best = records->add_subcommand("best", "write a log with the best record of each task");
  best->add_option("log", bestArgs->log, "the records log")->required();
  best->add_option("-o,--output", bestArgs->output, "the log to write")->required();
  best->add_flag("--force", bestArgs->force, "replace the output if it exists");
  best->callback([bestArgs] { writeKept(*bestArgs, 1); });

  auto distillArgs = std::make_shared<RecordsArgs>();
  CLI::App* distill = records->add_subcommand("distill", "write a log with the K best records of each task");
  distill->add_option("log", distillArgs->log, "the records log")->required();
  distill->add_option("-o,--output", distillArgs->output, "the log to write")->required();
  distill->add_option("--top", distillArgs->top, "records to keep per task")->check(integerIn(1, 1000000));
  distill->add_flag("--force", distillArgs->force, "replace the output if it exists");
  distill->callback([distillArgs] { writeKept(*distillArgs, distillArgs->top); });

  auto shippedArgs = std::make_shared<RecordsArgs>();
  CLI::App* shipped = records->add_subcommand("shipped", "list the records shipped with tessel and the log a target's builds use");
  shipped->add_option("--target", shippedArgs->target, "a target string: cpu (this machine), \"cpu -mcpu=...\", cuda, opencl or vta");
  shipped->add_option("--vta-config", shippedArgs->vtaConfig, "--target vta: the hardware configuration, a vta_config.json (default: built in)");
  shipped->callback([shippedArgs] { listShipped(*shippedArgs); });

  addRecordsPlotCommand(records);
}

}  // namespace tessel::cli
