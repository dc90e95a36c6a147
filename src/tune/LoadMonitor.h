/// Knows when the machine is busy, so that tuning does not log garbage as measurements. Before
/// each batch runs, it samples how many cores other processes keep busy (/proc/stat) and times
/// the runner's probe (a fixed kernel on the measurement threads) against the fastest probe of
/// the run. When the probe is markedly slower than idle it warns once
///   machine busy: measurements 85% slower than idle; results may be noisy
/// and pauses, re-probing, until the machine is quiet again or the pause is over; a batch
/// measured while others held cores or the probe was slow is flagged as measured under load
/// (records say so: result.under_load), and the counts go into the tune summary.
#pragma once
#include <cstdio>
#include <optional>
#include <string>

#include "runtime/MachineLoad.h"
#include "tune/MeasureBatch.h"

namespace tessel::tune {

struct LoadMonitorOptions {
  double slowdown = 1.25;      ///< a probe this many times slower than the fastest is "busy"
  double pauseSeconds = 10;    ///< how long to wait for a busy machine to calm before measuring anyway
  double otherCoresBusy = 0.5; ///< other processes keeping this many cores busy is "busy" too
  bool sampleLoad = true;      ///< sample /proc/stat (false: a remote runner, or tests)
  std::FILE* warnTo = stderr;  ///< where the warnings go (nullptr: silent)
};

class LoadMonitor {
 public:
  LoadMonitor(Runner& runner, LoadMonitorOptions options = {});

  /// Before a batch runs: probes (pausing while busy, up to the pause) and says whether the
  /// batch is measured under load. `candidates` is counted in the totals.
  bool beforeRun(int candidates);

  int batchesUnderLoad() const { return batchesUnderLoad_; }
  int candidatesUnderLoad() const { return candidatesUnderLoad_; }
  int candidatesMeasured() const { return candidatesMeasured_; }
  double pausedSeconds() const { return pausedSeconds_; }
  /// The fastest probe so far (seconds), if the runner has a probe.
  std::optional<double> idleProbe() const { return idle_; }
  /// "12 of 360 candidates were measured under load (paused 8.5 s waiting for the machine)"
  std::string summary() const;

 private:
  struct Reading {
    bool busy = false;
    double slowdown = 1;  ///< probe / fastest probe
    runtime::MachineLoad load;
  };
  Reading read();
  void warn(const std::string& line);

  Runner& runner_;
  LoadMonitorOptions options_;
  std::optional<double> idle_;
  bool warned_ = false;
  int batchesUnderLoad_ = 0, candidatesUnderLoad_ = 0, candidatesMeasured_ = 0;
  double pausedSeconds_ = 0;
};

}  // namespace tessel::tune
