/// tessel records plot LOG -o FILE.svg|png [--target T] [--model M ...] [--title TEXT] [--force]:
/// the picture of a tuning run — each task's best GFLOPS over its trials and the network's
/// estimated latency over time (tune/TuningCurves.h computes the curves) — drawn by the Python
/// package's drawing code (src/python/tessel/records_plot.py: an installed tessel runs the
/// installed package's copy; run with the Python the package is built for, or $TESSEL_PYTHON)
/// with matplotlib. With --model, each task's weight in the
/// estimate is how many times that network runs it (else every task counts once). Prints what the
/// picture shows in words.
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

/// Adds `plot` to the `records` command.
void addRecordsPlotCommand(CLI::App* records);

}  // namespace tessel::cli
