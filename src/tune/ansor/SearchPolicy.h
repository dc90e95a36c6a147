/// The search policy interface of the auto-scheduler: it proposes schedules as step lists and
/// learns from their measured throughputs. As with template tuners (autotvm/Tuner.h), the
/// tuning loop (TuneAutoTask.h) owns the budget, the measurement, the log and early stopping;
/// a policy only chooses, and never proposes a schedule twice.
#pragma once
#include <vector>

#include "schedule/Steps.h"

namespace tessel::tune::ansor {

/// A measured schedule: its steps and its throughput (FLOPs per second; 0: it failed).
struct MeasuredSchedule {
  std::vector<schedule::StepPtr> steps;
  double flopsPerSecond = 0;
};

class SearchPolicy {
 public:
  virtual ~SearchPolicy() = default;
  /// Up to `count` schedules neither proposed nor measured before; fewer (even none) when the
  /// search finds no new ones.
  virtual std::vector<std::vector<schedule::StepPtr>> nextBatch(size_t count) = 0;
  /// Measurements, of its proposals or from a resumed log, in measurement order.
  virtual void update(const std::vector<MeasuredSchedule>& measured) = 0;
};

}  // namespace tessel::tune::ansor
