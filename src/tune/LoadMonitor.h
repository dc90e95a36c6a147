/// Knows when the machine is busy, so that tuning does not log garbage as measurements. Before
/// each batch runs, it samples how many cores other processes keep busy (/proc/stat) and times
/// the runner's probe (a fixed kernel on the measurement threads) against the fastest probe of
/// the run's quiet probes (about the tenth percentile: one lucky probe is not the machine's idle
/// speed); a slow probe counts only when the one right after it is slow too (a core waking from
/// idle is not a busy machine). When the probe is markedly slower than idle it warns once
///   machine busy: measurements 85% slower than idle; results may be noisy
/// and pauses, re-probing, until the machine is quiet again or the pause is over; a batch
/// measured while others held cores or the probe was slow is flagged as measured under load
/// (records say so: result.under_load), and the counts go into the tune summary.
///
/// The pauses have a budget: one pause plus a share of the time since the monitor started. On a
/// shared host a sibling hyperthread's tenant halves a compute kernel's speed for seconds at a
/// time, often: with unbounded pauses, two thirds of a resnet-50 tuning run went to waiting. Past
/// the budget a busy batch is measured at once, flagged, and the confirmation's interleaved
/// rounds (tune/Confirmation.h) are what keeps a sample taken under load from shipping.
#pragma once
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/MachineLoad.h"
#include "tune/MeasureBatch.h"

namespace tessel::tune {

struct LoadMonitorOptions {
  double slowdown = 1.25;      ///< a probe this many times slower than the fastest is "busy"
  double pauseSeconds = 10;    ///< the longest wait for a busy machine to calm before measuring anyway
  double pauseShare = 0.2;     ///< pauses in all take at most this share of the time since the start (plus one pause)
  double otherCoresBusy = 0.5; ///< other processes keeping this many cores busy is "busy" too
  bool sampleLoad = true;      ///< sample /proc/stat (false: a remote runner, or tests)
  std::FILE* warnTo = stderr;  ///< where the warnings go (nullptr: silent)
  /// Seconds on a steady clock, a sleep, and a sample of the machine's load given the processes
  /// of ours (tests script them; empty: the real ones).
  std::function<double()> clock;
  std::function<void(double)> sleep;
  std::function<runtime::MachineLoad(const std::vector<int>& ours)> sampleLoadOf;
};

class LoadMonitor {
 public:
  LoadMonitor(Runner& runner, LoadMonitorOptions options = {});

  /// Before a batch runs: probes (pausing while busy, within the pause budget) and says whether
  /// the batch is measured under load. `candidates` is counted in the totals.
  bool beforeRun(int candidates);

  int batchesUnderLoad() const { return batchesUnderLoad_; }
  int candidatesUnderLoad() const { return candidatesUnderLoad_; }
  int candidatesMeasured() const { return candidatesMeasured_; }
  double pausedSeconds() const { return pausedSeconds_; }
  /// The idle figure (seconds): the k-th fastest quiet probe so far, k a tenth of the quiet ones,
  /// from 2 to kIdleRank (fewer while fewer are kept); nothing if the runner has no probe.
  std::optional<double> idleProbe() const;
  static constexpr size_t kIdleRank = 10;
  /// "12 of 360 candidates were measured under load (paused 8.5 s of 120.0 s waiting for the machine)"
  std::string summary() const;

 private:
  struct Reading {
    bool busy = false;
    double slowdown = 1;  ///< probe / fastest probe
    runtime::MachineLoad load;
  };
  Reading read();
  /// The probe's seconds; a slow one is probed again at once and the faster reading kept.
  std::optional<double> probe();
  void warn(const std::string& line);
  double now() const;
  /// How long the next pause may last: the pause, within what the budget has left.
  double pauseAllowance() const;
  /// Re-probes a slow machine until it is quiet or the allowance is spent; the last reading.
  Reading waitForQuiet(Reading r);

  Runner& runner_;
  LoadMonitorOptions options_;
  double start_ = 0;
  void noteProbe(double seconds);
  std::vector<double> fastestProbes_;  ///< ascending, at most kIdleRank
  size_t probesSeen_ = 0;
  bool warned_ = false, budgetNoted_ = false;
  int batchesUnderLoad_ = 0, candidatesUnderLoad_ = 0, candidatesMeasured_ = 0;
  double pausedSeconds_ = 0;
};

}  // namespace tessel::tune
