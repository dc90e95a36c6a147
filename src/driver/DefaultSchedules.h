/// The default CPU schedule of a network build, with a note of every function whose rules
/// failed and the simpler schedule it got instead: a failing rule is reported, never silent.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/Schedules.h"
#include "target/Target.h"

namespace tessel::driver {

class DefaultSchedules {
 public:
  /// Schedules for `target`'s machine (ops::cpuScheduleOptionsFor).
  explicit DefaultSchedules(const target::Target& target = target::Target::host()) : options_(ops::cpuScheduleOptionsFor(target)) {}
  /// The provider for graph::BuildOptions::schedule (or a records provider's fallback); it
  /// shares state with this object.
  std::function<std::vector<schedule::StepPtr>(const te::ComputeDAG&)> provider();
  /// "default schedules: every kernel got the rules' schedule", or "default schedules: 2 of 21
  /// kernels fell back: T_x (naive loops (...)), ...".
  std::string summary() const;

 private:
  struct Notes {
    int kernels = 0;
    std::vector<std::string> fallbacks;
  };
  ops::CpuScheduleOptions options_;
  std::shared_ptr<Notes> notes_ = std::make_shared<Notes>();
};

}  // namespace tessel::driver
