#include "driver/DefaultSchedules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tessel::driver {

std::function<std::vector<schedule::StepPtr>(const te::ComputeDAG&)> DefaultSchedules::provider() {
  return [notes = notes_, options = options_](const te::ComputeDAG& dag) {
    std::string fallback;
    auto steps = ops::defaultCpuSchedule(dag, options, nullptr, &fallback);
    ++notes->kernels;
    if (!fallback.empty())
      notes->fallbacks.push_back(fmt::format("{} ({})", dag.outputNames().empty() ? "?" : dag.outputNames()[0], fallback));
    return steps;
  };
}

std::string DefaultSchedules::summary() const {
  if (notes_->fallbacks.empty())
    return fmt::format("default schedules: the rules applied to all {} kernels scheduled by them", notes_->kernels);
  return fmt::format("default schedules: {} of {} kernels fell back to a simpler schedule: {}", notes_->fallbacks.size(),
                     notes_->kernels, fmt::join(notes_->fallbacks, "; "));
}

}  // namespace tessel::driver
