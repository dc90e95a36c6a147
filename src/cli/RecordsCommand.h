/// The commands on records logs:
///   tessel records show LOG [--steps]          a summary per task: trials, errors by kind, the
///                                              best GFLOPS and latency, the best config
///   tessel records best LOG -o OUT [--force]   a new log with the best record of each task
///   tessel records distill LOG -o OUT [--top K] [--force]
///                                              a new log with the K best records of each task
///   tessel records plot LOG -o FILE.svg|png    each task's best GFLOPS over its trials and the
///                                              estimated network latency over time (RecordsPlot.h)
/// Damaged lines of LOG are skipped with a warning on stderr that counts them.
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addRecordsCommands(CLI::App& app);

}  // namespace tessel::cli
