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
  if (!options_.sampleLoadOf)
    options_.sampleLoadOf = [](const std::vector<int>& ours) { return runtime::sampleMachineLoad(kSampleWindow, ours); };
  start_ = now();
  // The idle figure starts as the fastest of a few probes now (a busy start is caught by the
  // load sample, and a faster probe later lowers the figure).
  for (int i = 0; i < 3; ++i)
    if (auto p = runner_.probeSeconds()) noteProbe(*p);
}

// The fastest probe of a long run is an outlier: on the GPU host's idle 16-core Xeon, 240
// probes read a minimum of 4.56 ms, a tenth percentile of 4.71 and a median of 4.89, and 8-10% of
// them were over 1.25x the minimum (busy, for the monitor), none over 1.25x the tenth percentile.
// So the idle figure is about the tenth percentile of the quiet probes: the k-th fastest, k a
// tenth of them, at least the second (one lucky probe among the first few) and at most
// kIdleRank. Only probes read as quiet enter the list, so a long busy spell does not raise it.
void LoadMonitor::noteProbe(double seconds) {
  ++probesSeen_;
  auto at = std::lower_bound(fastestProbes_.begin(), fastestProbes_.end(), seconds);
  if (fastestProbes_.size() < kIdleRank) fastestProbes_.insert(at, seconds);
  else if (at != fastestProbes_.end()) {
    fastestProbes_.insert(at, seconds);
    fastestProbes_.pop_back();
  }
}

std::optional<double> LoadMonitor::idleProbe() const {
  if (fastestProbes_.empty()) return std::nullopt;
  size_t rank = std::min(std::clamp<size_t>(probesSeen_ / 10, 2, kIdleRank), fastestProbes_.size());
  return fastestProbes_[rank - 1];
}

double LoadMonitor::now() const { return options_.clock(); }

double LoadMonitor::pauseAllowance() const {
  double budget = options_.pauseSeconds + options_.pauseShare * (now() - start_) - pausedSeconds_;
  return std::clamp(budget, 0.0, options_.pauseSeconds);
}

std::optional<double> LoadMonitor::probe() {
  auto first = runner_.probeSeconds();
  auto idle = idleProbe();
  if (!first || !idle || *first <= options_.slowdown * *idle) return first;
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
  if (options_.sampleLoad) {
    r.load = options_.sampleLoadOf(runner_.processIds());
    // The kernel counts CPU time in whole clock ticks (10 ms): in a 30 ms sample, two ticks of
    // anything (a kernel thread writing the batch's libraries out) read as 0.7 of a core, which
    // is "busy" on a 2-core machine (mobilenet-v2's tuning there: "other processes keep 0.7 of 2
    // cores busy", four times in a run). A busy sample is taken again and the quieter one kept.
    if (r.load.otherBusyCores >= options_.otherCoresBusy) {
      runtime::MachineLoad again = options_.sampleLoadOf(runner_.processIds());
      if (again.otherBusyCores < r.load.otherBusyCores) r.load = again;
    }
  }
  if (auto p = probe()) {
    r.slowdown = *p / *idleProbe();
    if (r.slowdown <= options_.slowdown) noteProbe(*p);
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
