/// The seeds' progress line of a task's tuning, one function for both tuners, with the whole
/// run's remaining time when it is known (tune/RunEstimate.h):
///   [Task  1/12]  Current/Best:   12.31/  45.20 GFLOPS | Progress: (480/1000) | 640.31 s | run: about 2 h 05 min left (11000 trials) Done.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "tune/RunEstimate.h"

namespace tessel::tune {

struct ProgressLine {
  std::string prefix;       ///< "[Task  1/12] " (empty: no line)
  std::FILE* to = stdout;   ///< null: no line
  bool live = false;        ///< rewrite the line in place after each batch; else print it once at the end
  const RunEstimate* run = nullptr;  ///< the whole run's estimate (null: not shown)
};

/// Prints the line (the final one ends with " Done." and a newline); nothing when `line` says none.
void printProgressLine(const ProgressLine& line, bool final, double currentFlopsPerSecond, double bestFlopsPerSecond, int64_t done,
                       int64_t budget, double seconds);

}  // namespace tessel::tune
