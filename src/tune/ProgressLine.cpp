#include "tune/ProgressLine.h"

namespace tessel::tune {

void printProgressLine(const ProgressLine& line, bool final, double currentFlopsPerSecond, double bestFlopsPerSecond, int64_t done,
                       int64_t budget, double seconds) {
  if (line.prefix.empty() || !line.to || (!final && !line.live)) return;
  std::fprintf(line.to, "%s%s Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%lld/%lld) | %.2f s%s", line.live ? "\r" : "",
               line.prefix.c_str(), currentFlopsPerSecond / 1e9, bestFlopsPerSecond / 1e9, static_cast<long long>(done),
               static_cast<long long>(budget), seconds, final ? " Done.\n" : "");
  std::fflush(line.to);
}

}  // namespace tessel::tune
