#include "tune/ProgressLine.h"

namespace tessel::tune {

void printProgressLine(const ProgressLine& line, bool final, double currentFlopsPerSecond, double bestFlopsPerSecond, int64_t done,
                       int64_t budget, double seconds) {
  if (line.prefix.empty() || !line.to || (!final && !line.live)) return;
  std::string run = line.run ? line.run->describe() : "";
  if (!run.empty()) run = " | run: " + run;
  // A live line is rewritten in place: what a longer line before left is cleared.
  std::fprintf(line.to, "%s%s Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%lld/%lld) | %.2f s%s%s%s", line.live ? "\r" : "",
               line.prefix.c_str(), currentFlopsPerSecond / 1e9, bestFlopsPerSecond / 1e9, static_cast<long long>(done),
               static_cast<long long>(budget), seconds, run.c_str(), line.live ? "\033[K" : "", final ? " Done.\n" : "");
  std::fflush(line.to);
}

}  // namespace tessel::tune
