#include "tune/LoadMonitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace tessel::tune {

namespace {
constexpr auto kSampleWindow = std::chrono::milliseconds(30);
constexpr double kPauseStepSeconds = 0.5;
}  // namespace

LoadMonitor::LoadMonitor(Runner& runner, LoadMonitorOptions options) : runner_(runner), options_(std::move(options)) {
  if (!options_.clock)
    options_.clock = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  if (!options_.sleep) options_.sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  start_ = now();
  // The idle figure: the fastest of a few probes now (a busy start is caught by the load
  // sample, and a faster probe later lowers the figure).
  for (int i = 0; i < 3; ++i)
    if (auto p = runner_.probeSeconds()) idle_ = idle_ ? std::min(*idle_, *p) : *p;
}

double LoadMonitor::now() const { return options_.clock(); }

double LoadMonitor::pauseAllowance() const {
  double budget = options_.pauseSeconds + options_.pauseShare * (now() - start_) - pausedSeconds_;
  return std::clamp(budget, 0.0, options_.pauseSeconds);
}

std::optional<double> LoadMonitor::probe() {
  auto first = runner_.probeSeconds();
  if (!first || !idle_ || *first <= options_.slowdown * *idle_) return first;
  // A slow probe is read again at once. After half a second or more of idle cores (the builder
  // compiling the next batch, or this monitor's own pause), a VM's vCPU comes back slow for
  // longer than one probe: on the 16-vCPU Xeon of the GPU host, 48% of probes 0.5 s apart read
  // over 1.25x the fastest with nothing else running, while probes right after another read so
  // 0% of the time. A neighbour's load lasts longer than the two probes; a waking core does not.
  auto second = runner_.probeSeconds();
  return second ? std::min(*first, *second) : first;
}

LoadMonitor::Reading LoadMonitor::read() {
  Reading r;
  // The worker's own threads are not a neighbour: after a batch or a probe, libgomp's idle
  // threads spin before they sleep (OMP_WAIT_POLICY unset), and on the GPU host's 16-core Xeon
  // counting them as others flagged 48 of 126 candidates "under load" on an idle machine (none
  // with OMP_WAIT_POLICY=passive).
  if (options_.sampleLoad) r.load = runtime::sampleMachineLoad(kSampleWindow, runner_.processIds());
  if (auto p = probe()) {
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

LoadMonitor::Reading LoadMonitor::waitForQuiet(Reading r) {
  double allowance = pauseAllowance();
  if (allowance < kPauseStepSeconds) {
    if (!budgetNoted_ && options_.pauseSeconds > 0) {
      warn(fmt::format("waiting for the machine has taken {:.0f} s of {:.0f} s, the most allowed ({:.0f}% and one pause): "
                       "busy batches run without waiting while it stays there, flagged as measured under load",
                       pausedSeconds_, now() - start_, 100 * options_.pauseShare));
      budgetNoted_ = true;
    }
    return r;
  }
  double start = now(), waited = 0;
  while (r.slowdown > options_.slowdown && waited < allowance) {
    options_.sleep(kPauseStepSeconds);
    r = read();
    waited = now() - start;
  }
  pausedSeconds_ += waited;
  if (r.slowdown <= options_.slowdown) {
    warn(fmt::format("machine quiet again after {:.1f} s; measuring", waited));
    warned_ = false;
  }
  return r;
}

bool LoadMonitor::beforeRun(int candidates) {
  candidatesMeasured_ += candidates;
  Reading r = read();
  if (r.slowdown > options_.slowdown) {
    // Measurements now would be slow by an amount that has nothing to do with the candidates:
    // wait a little for the machine to calm down, as far as the budget allows.
    if (!warned_)
      warn(fmt::format("machine busy: measurements {:.0f}% slower than idle; results may be noisy{}", 100 * (r.slowdown - 1),
                       options_.sampleLoad ? fmt::format(" ({})", r.load.describe()) : ""));
    warned_ = true;
    r = waitForQuiet(r);
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
  if (pausedSeconds_ > 0)
    text += fmt::format(" (paused {:.1f} s of {:.1f} s waiting for the machine)", pausedSeconds_, now() - start_);
  return text;
}

}  // namespace tessel::tune
