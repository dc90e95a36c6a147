#include "tune/LoadMonitor.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

namespace tessel::tune {

namespace {
constexpr auto kSampleWindow = std::chrono::milliseconds(30);
constexpr auto kPauseStep = std::chrono::milliseconds(500);
}  // namespace

LoadMonitor::LoadMonitor(Runner& runner, LoadMonitorOptions options) : runner_(runner), options_(options) {
  // The idle figure: the fastest of a few probes now (a busy start is caught by the load
  // sample, and a faster probe later lowers the figure).
  for (int i = 0; i < 3; ++i)
    if (auto p = runner_.probeSeconds()) idle_ = idle_ ? std::min(*idle_, *p) : *p;
}

LoadMonitor::Reading LoadMonitor::read() {
  Reading r;
  if (options_.sampleLoad) r.load = runtime::sampleMachineLoad(kSampleWindow);
  if (auto p = runner_.probeSeconds()) {
    if (!idle_ || *p < *idle_) idle_ = *p;
    r.slowdown = *p / *idle_;
  }
  r.busy = r.slowdown > options_.slowdown || (options_.sampleLoad && r.load.otherBusyCores >= options_.otherCoresBusy);
  return r;
}

void LoadMonitor::warn(const std::string& line) {
  if (!options_.warnTo) return;
  std::fprintf(options_.warnTo, "%s\n", line.c_str());
  std::fflush(options_.warnTo);
}

bool LoadMonitor::beforeRun(int candidates) {
  candidatesMeasured_ += candidates;
  Reading r = read();
  if (r.slowdown > options_.slowdown) {
    // Measurements now would be slow by an amount that has nothing to do with the candidates:
    // wait a little for the machine to calm down.
    if (!warned_)
      warn(fmt::format("machine busy: measurements {:.0f}% slower than idle; results may be noisy{}", 100 * (r.slowdown - 1),
                       options_.sampleLoad ? fmt::format(" ({})", r.load.describe()) : ""));
    warned_ = true;
    auto start = std::chrono::steady_clock::now();
    while (r.slowdown > options_.slowdown &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < options_.pauseSeconds) {
      std::this_thread::sleep_for(kPauseStep);
      r = read();
    }
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    pausedSeconds_ += waited;
    if (r.slowdown <= options_.slowdown) {
      warn(fmt::format("machine quiet again after {:.1f} s; measuring", waited));
      warned_ = false;
    }
  } else if (r.busy && !warned_) {
    warn(fmt::format("machine busy: {}; results may be noisy", r.load.describe()));
    warned_ = true;
  } else if (!r.busy) {
    warned_ = false;
  }
  if (r.busy) {
    ++batchesUnderLoad_;
    candidatesUnderLoad_ += candidates;
  }
  return r.busy;
}

std::string LoadMonitor::summary() const {
  std::string text = fmt::format("{} of {} candidates were measured under load", candidatesUnderLoad_, candidatesMeasured_);
  if (pausedSeconds_ > 0) text += fmt::format(" (paused {:.1f} s waiting for the machine)", pausedSeconds_);
  return text;
}

}  // namespace tessel::tune
