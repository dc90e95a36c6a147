#include "tune/autotvm/ResumedTrials.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/Error.h"
#include "tune/RecordQueries.h"

namespace tessel::tune::autotvm {

int64_t ResumedTrials::leftOutCount() const {
  int64_t n = 0;
  for (const auto& [why, count] : leftOut) n += count;
  return n;
}

void ResumedTrials::accumulate(const ResumedTrials& other) {
  trials.insert(trials.end(), other.trials.begin(), other.trials.end());
  records += other.records;
  for (const auto& [why, count] : other.leftOut) leftOut[why] += count;
}

std::string ResumedTrials::leftOutLine() const {
  if (leftOut.empty()) return "";
  std::vector<std::string> reasons;
  for (const auto& [why, count] : leftOut) reasons.push_back(fmt::format("{} ({})", why, count));
  return fmt::format("--resume: {} of {} records left out, their configs are not in today's spaces: {}", leftOutCount(), records,
                     fmt::join(reasons, "; "));
}

ResumedTrials resumedTrials(const TuningTask& task, const std::vector<TuningRecord>& records) {
  ResumedTrials out;
  // The steps of the configs that records without some of today's knobs land on, by index.
  std::map<uint64_t, std::string> instantiated;
  for (const auto& r : recordsOfTask(records, task.measure->workloadKey, task.measure->target.str())) {
    if (!r.config || r.task.templateName != task.templateName || r.result.confirmed) continue;
    ++out.records;
    EntityMatch match = task.space->matchEntity(r.config->entity);
    if (!match.config) {
      ++out.leftOut[match.mismatch];
      continue;
    }
    if (!match.missing.empty()) {
      uint64_t index = match.config->index();
      auto [it, fresh] = instantiated.try_emplace(index);
      if (fresh) {
        try {
          it->second = schedule::stepsToJson(task.instantiate(*match.config)).dump();
        } catch (const Error&) {
          it->second.clear();  // no steps: no record can be this config's
        }
      }
      if (it->second != schedule::stepsToJson(r.steps).dump()) {
        bool one = match.missing.size() == 1;
        ++out.leftOut[fmt::format("written without knob{} '{}', and not the schedule of {} first option{}", one ? "" : "s",
                                  fmt::join(match.missing, "', '"), one ? "its" : "their", one ? "" : "s")];
        continue;
      }
    }
    out.trials.push_back({match.config->index(), r.ok() ? task.flops / r.cost() : 0.0});
  }
  return out;
}

std::vector<std::vector<Trial>> resumedTrialsOfTasks(const std::vector<TuningTaskPtr>& tasks, const std::vector<TuningRecord>& records,
                                                     ResumedTrials& total) {
  std::vector<std::vector<Trial>> trials;
  for (const auto& task : tasks) {
    ResumedTrials resumed = resumedTrials(*task, records);
    trials.push_back(resumed.trials);
    total.accumulate(resumed);
  }
  return trials;
}

}  // namespace tessel::tune::autotvm
