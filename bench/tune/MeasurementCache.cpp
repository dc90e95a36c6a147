#include "MeasurementCache.h"
#include "support/Clock.h"

#include <chrono>

namespace tessel::bench {

namespace {

/// Marks a build that was never made because the candidate's result is already known.
constexpr const char* kSharedKernel = "(shared measurement)";

}  // namespace

MeasurementCache::MeasurementCache(tune::Builder& builder, tune::Runner& runner, bool share)
    : innerBuilder_(builder), innerRunner_(runner), share_(share) {}

// The task's key names the workload and target; the config text names the schedule (a
// template config's index and knob values), so equal keys are the same kernel.
std::string MeasurementCache::keyOf(const tune::MeasureInput& input) { return input.task->key() + " | " + input.config; }

bool MeasurementCache::wasShared(const tune::MeasureInput& input) const {
  auto it = sharedNow_.find(keyOf(input));
  return it != sharedNow_.end() && it->second;
}

std::vector<tune::BuildResult> MeasurementCache::BuilderSide::build(const std::vector<tune::MeasureInput>& inputs) {
  MeasurementCache& c = cache_;
  std::vector<tune::BuildResult> results(inputs.size());
  std::vector<tune::MeasureInput> toBuild;
  std::vector<size_t> builtAt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (c.share_ && c.results_.count(keyOf(inputs[i]))) {
      results[i].kernelName = kSharedKernel;
    } else {
      builtAt.push_back(i);
      toBuild.push_back(inputs[i]);
    }
  }
  if (!toBuild.empty()) {
    auto start = std::chrono::steady_clock::now();
    std::vector<tune::BuildResult> built = c.innerBuilder_.build(toBuild);
    c.counters_.buildSeconds += secondsSince(start);
    for (size_t k = 0; k < builtAt.size(); ++k) results[builtAt[k]] = std::move(built[k]);
  }
  return results;
}

void MeasurementCache::BuilderSide::discard(const tune::BuildResult& result) {
  if (result.libraryPath.empty() && result.kernelName == kSharedKernel) return;
  cache_.innerBuilder_.discard(result);
}

std::vector<tune::MeasureResult> MeasurementCache::RunnerSide::run(const std::vector<tune::MeasureInput>& inputs,
                                                                   const std::vector<tune::BuildResult>& builds) {
  MeasurementCache& c = cache_;
  c.sharedNow_.clear();
  std::vector<tune::MeasureResult> results(inputs.size());
  std::vector<tune::MeasureInput> toRun;
  std::vector<tune::BuildResult> toRunBuilds;
  std::vector<size_t> runAt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string key = keyOf(inputs[i]);
    auto known = c.share_ ? c.results_.find(key) : c.results_.end();
    c.sharedNow_[key] = known != c.results_.end();
    if (known != c.results_.end()) {
      results[i] = known->second;
      ++c.counters_.shared;
    } else {
      runAt.push_back(i);
      toRun.push_back(inputs[i]);
      toRunBuilds.push_back(builds[i]);
    }
  }
  if (!toRun.empty()) {
    auto start = std::chrono::steady_clock::now();
    std::vector<tune::MeasureResult> measured = c.innerRunner_.run(toRun, toRunBuilds);
    c.counters_.runSeconds += secondsSince(start);
    c.counters_.measured += int64_t(toRun.size());
    for (size_t k = 0; k < runAt.size(); ++k) {
      if (c.share_) c.results_[keyOf(toRun[k])] = measured[k];
      results[runAt[k]] = std::move(measured[k]);
    }
  }
  return results;
}

bool MeasurementCache::RunnerSide::needsReference(const tune::MeasureTask& task) const {
  return cache_.innerRunner_.needsReference(task);
}

void MeasurementCache::RunnerSide::setReference(const tune::MeasureTask& task, const tune::BuildResult& reference) {
  cache_.innerRunner_.setReference(task, reference);
}

}  // namespace tessel::bench
