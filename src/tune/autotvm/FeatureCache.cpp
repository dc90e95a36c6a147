#include "tune/autotvm/FeatureCache.h"

#include <algorithm>
#include <thread>
#include <unordered_set>

#include "support/Error.h"

namespace tessel::tune::autotvm {

FeatureCache::FeatureCache(TuningTaskPtr task, FeatureType type, int numThreads)
    : task_(std::move(task)), type_(type), numThreads_(numThreads) {
  TESSEL_CHECK(task_ && task_->space, "feature cache: the task has no config space");
  if (type_ == FeatureType::Knob) {
    length_ = knobFeatureLength(*task_->space);
  } else {
    TESSEL_CHECK(task_->instantiate && task_->measure, "{} features of task {}: the task cannot instantiate configs",
                 featureTypeName(type_), task_->name);
    length_ = type_ == FeatureType::Itervar ? kItervarLength : kCurveLength;
  }
  if (numThreads_ <= 0) numThreads_ = int(std::max(1u, std::thread::hardware_concurrency()));
}

FeatureCache::Entry FeatureCache::extract(uint64_t index) const {
  ConfigEntity config = task_->space->get(index);
  if (type_ == FeatureType::Knob) return {knobFeatures(config, *task_->space), true};
  schedule::State state;
  try {
    state = task_->instantiateState ? task_->instantiateState(config) : schedule::replay(task_->measure->dag, task_->instantiate(config));
  } catch (const Error&) {
    // An invalid config is a fact about the space, not a failure of the tuner.
    return {std::vector<float>(length_, 0.f), false};
  }
  const target::Target& target = task_->measure->target;
  const target::CpuMachine* machine = target.isCpu() ? &target.cpu : nullptr;
  return {type_ == FeatureType::Itervar ? itervarFeatures(state, machine) : curveFeatures(state, machine), true};
}

void FeatureCache::ensure(const std::vector<uint64_t>& indices) {
  std::vector<uint64_t> missing;
  std::unordered_set<uint64_t> seen;
  for (uint64_t index : indices)
    if (!cache_.count(index) && seen.insert(index).second) missing.push_back(index);
  if (missing.empty()) return;
  std::vector<Entry> entries(missing.size());
  // Knob features cost nanoseconds: threads would only add overhead.
  if (numThreads_ == 1 || missing.size() < 8 || type_ == FeatureType::Knob) {
    for (size_t i = 0; i < missing.size(); ++i) entries[i] = extract(missing[i]);
  } else {
    if (!pool_) pool_ = std::make_unique<ThreadPool>(numThreads_);
    pool_->parallelFor(int(missing.size()), [&](int i) { entries[size_t(i)] = extract(missing[size_t(i)]); });
  }
  for (size_t i = 0; i < missing.size(); ++i) cache_.emplace(missing[i], std::move(entries[i]));
}

std::vector<float> FeatureCache::matrix(const std::vector<uint64_t>& indices) {
  ensure(indices);
  std::vector<float> out;
  out.reserve(indices.size() * length_);
  for (uint64_t index : indices) {
    const std::vector<float>& row = cache_.at(index).features;
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

const std::vector<float>& FeatureCache::features(uint64_t index) {
  ensure({index});
  return cache_.at(index).features;
}

bool FeatureCache::valid(uint64_t index) {
  ensure({index});
  return cache_.at(index).valid;
}

}  // namespace tessel::tune::autotvm
