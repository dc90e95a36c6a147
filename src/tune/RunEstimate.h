/// The remaining time of a whole tuning run, estimated from its pace so far: the wall time the
/// run has taken per trial measured (builds, runs, the tuner's own work and the confirmations
/// amortized) times the trials it still plans. A network of twenty tasks at 1000 trials each is
/// 20,000 trials; the progress lines say what that means in hours before the run is half over.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace tessel::tune {

class RunEstimate {
 public:
  /// A run that plans to measure at most `plannedTrials` (resumed trials not counted); the
  /// clock starts now.
  explicit RunEstimate(int64_t plannedTrials);

  /// `trials` more were measured.
  void measured(int64_t trials);
  /// A part of the run ended `trials` short of its plan (a task stopped early, its space ran
  /// out): those will not be measured.
  void shortened(int64_t trials);

  int64_t plannedTrials() const { return planned_; }
  int64_t measuredTrials() const { return measured_; }
  int64_t remainingTrials() const;
  /// Seconds left at the pace so far; negative before the first trial.
  double remainingSeconds() const;
  /// "about 2 h 10 min left (18000 trials)", "about 40 s left (12 trials)", "no trials left";
  /// "" before the first trial.
  std::string describe() const;

 private:
  int64_t planned_ = 0, measured_ = 0;
  std::chrono::steady_clock::time_point start_;
};

/// A duration for reading: "45 s", "12 min 05 s", "3 h 20 min", "2 d 4 h".
std::string roughDuration(double seconds);

}  // namespace tessel::tune
