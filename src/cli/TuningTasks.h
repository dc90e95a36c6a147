/// The CLI's side of the tuning task list (driver/TuningTasks.h): the --scheduler and
/// --cold-cache flags parsed into its options, and `tessel tasks` / `tune --list-tasks`.
#pragma once
#include <string>
#include <vector>

#include "cli/ModelArgs.h"
#include "driver/TuningTasks.h"

namespace tessel::cli {

using driver::ColdCacheMode;
using driver::ListedTask;
using driver::SearchKind;
using driver::TaskList;
using driver::TaskListOptions;
using driver::formatTaskDags;
using driver::formatTaskList;
using driver::heaviestOperation;
using driver::listTuningTasks;
using driver::parseOps;
using driver::selectTasks;
using driver::taskPrefix;

/// --scheduler's value (autotvm or auto) as the tasks' kind; Error naming any other.
SearchKind searchKind(const std::string& scheduler);
/// --cold-cache's value (auto, always or never); Error naming any other.
ColdCacheMode coldCacheMode(const std::string& text);

/// `--scheduler autotvm|auto` on a command (tune, tasks): which tuner's tasks.
void addSchedulerOption(CLI::App* command, std::string& scheduler);

/// What `tessel tasks` and `tune --list-tasks` print: "Extract tasks...", then the list of
/// `scheduler`'s tasks of the network for --target (measured cold as `coldCache` says), the
/// ones `numbers` and `ops` select where they select (selectTasks), and with `dags` each
/// task's DAG. For --target vta: the VTA flow's conv2d tasks.
void printNetworkTasks(const ModelArgs& args, driver::SearchKind search, driver::ColdCacheMode coldCache, bool dags,
                       const std::vector<size_t>& numbers = {}, const std::vector<std::string>& ops = {});

}  // namespace tessel::cli
