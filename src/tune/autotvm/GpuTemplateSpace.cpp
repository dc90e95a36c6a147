#include "tune/autotvm/GpuTemplateSpace.h"

#include <algorithm>

#include "support/Error.h"
#include "tune/ansor/SplitFactorizations.h"

namespace tessel::tune::autotvm {

int64_t largestDivisorAtMost(int64_t n, int64_t cap) {
  std::vector<int64_t> divisors = ansor::divisorsOf(n);  // increasing, 1 first
  return *std::prev(std::upper_bound(divisors.begin() + 1, divisors.end(), std::max<int64_t>(cap, 1)));
}

void defineThreadTile(ConfigSpace& space, const std::string& name, int64_t extent, int64_t maxThreads, int64_t maxInner,
                      const std::vector<int64_t>& include, double& unpruned) {
  SplitOptions o;
  o.numOutputs = 3;
  unpruned *= double(splitCandidates(extent, o).size());
  o.filter = [maxThreads, maxInner](const std::vector<int64_t>& p) { return p[1] <= maxThreads && p[2] <= maxInner; };
  o.include = {include};
  space.defineSplit(name, extent, o);
}

void defineTwoLevelSplit(ConfigSpace& space, const std::string& name, int64_t extent, int64_t maxInner,
                         const std::vector<int64_t>& include, double& unpruned) {
  SplitOptions o;
  unpruned *= double(splitCandidates(extent, o).size());
  o.filter = [maxInner](const std::vector<int64_t>& p) { return p[1] <= maxInner; };
  o.include = {include};
  space.defineSplit(name, extent, o);
}

void defineUnrollKnobs(ConfigSpace& space, double& unpruned) {
  space.defineKnob("auto_unroll_max_step", {0, 256, 1500});
  space.defineKnob("unroll_explicit", {0, 1});
  unpruned *= 6;
}

void addUnrollFallback(std::map<std::string, nlohmann::json>& values) {
  values["auto_unroll_max_step"] = 256;
  values["unroll_explicit"] = 1;
}

std::array<int64_t, 3> threeLevels(const ConfigEntity& config, const std::string& knob) {
  auto p = config.split(knob);
  TESSEL_CHECK(p.size() == 3, "the knob {} has {} parts, not 3", knob, p.size());
  return {p[0], p[1], p[2]};
}

ops::GpuImageTile gpuImageTileOf(const ConfigEntity& config) {
  ops::GpuImageTile tile;
  tile.f = threeLevels(config, "tile_f");
  tile.y = threeLevels(config, "tile_y");
  tile.x = threeLevels(config, "tile_x");
  tile.autoUnrollMaxStep = config.value("auto_unroll_max_step").get<int64_t>();
  tile.unrollExplicit = config.value("unroll_explicit").get<int64_t>() != 0;
  return tile;
}

std::vector<size_t> choicesOf(const ConfigSpace& space, const std::map<std::string, nlohmann::json>& values,
                              const std::string& templateName) {
  std::vector<size_t> choices;
  for (const Knob& k : space.knobs()) {
    auto value = values.find(k.name);
    TESSEL_CHECK(value != values.end(), "{}: no value for the knob {}", templateName, k.name);
    auto index = space.optionIndex(k.name, value->second);
    TESSEL_CHECK(index.has_value(), "{}: {} = {} is not in the space", templateName, k.name, value->second.dump());
    choices.push_back(*index);
  }
  return choices;
}

uint64_t configIndexOf(const ConfigSpace& space, std::map<std::string, nlohmann::json> values, const std::string& templateName) {
  return space.fromChoices(choicesOf(space, values, templateName)).index();
}

void checkThreadsPerBlock(const std::string& templateName, int64_t threads, const passes::GpuLimits& limits) {
  TESSEL_CHECK(threads <= limits.maxThreadsPerBlock, "{}: {} threads per block, the device ({}) allows {}", templateName, threads,
               limits.profile, limits.maxThreadsPerBlock);
}

void checkAccumulators(const std::string& templateName, int64_t accumulators) {
  TESSEL_CHECK(accumulators <= kMaxAccumulatorsPerThread, "{}: {} accumulators per thread would spill registers (at most {})",
               templateName, accumulators, kMaxAccumulatorsPerThread);
}

void checkSharedMemory(const std::string& templateName, const schedule::State& state, const passes::GpuLimits& limits) {
  int64_t shared = ops::sharedMemoryBytes(state);
  TESSEL_CHECK(shared <= limits.sharedMemoryLimit(),
               "{}: the block takes {} bytes of shared memory per block, the device ({}) has {}", templateName, shared,
               limits.profile, limits.sharedMemoryLimit());
}

void setSchedule(GpuTemplateSpace& t, std::function<ops::GpuTileSchedule(const ConfigEntity&)> schedule) {
  t.instantiate = [schedule](const ConfigEntity& config) { return schedule(config).steps; };
  t.instantiateState = [schedule](const ConfigEntity& config) { return schedule(config).state; };
}

bool succeeds(const std::function<void()>& f) {
  try {
    f();
    return true;
  } catch (const Error&) {
    return false;
  }
}

TuningTaskPtr makeGpuTemplateTask(const std::string& name, const std::string& templateName, const te::ComputeDAG& dag,
                                  const target::Target& target, const passes::GpuLimits& limits, const GpuTemplateSpace& t) {
  auto task = std::make_shared<TuningTask>();
  task->name = name;
  task->templateName = templateName;
  auto measure = std::make_shared<MeasureTask>(*makeMeasureTask(name, dag, target));
  measure->gpuLimits = limits;
  task->measure = measure;
  task->flops = dag.flopCount();
  task->space = t.space;
  task->instantiate = t.instantiate;
  task->instantiateState = t.instantiateState;
  task->fallbackIndex = t.fallback;
  task->fallbackIsDefaultSchedule = false;  // tiles the default schedule cannot express (gpu_default tunes that one)
  task->unprunedSize = t.unprunedSize;
  return task;
}

}  // namespace tessel::tune::autotvm
