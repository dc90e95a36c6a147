/// What the specific GPU templates (conv2d_nchw.cuda, depthwise_conv2d_nchw.cuda,
/// dense_small_batch.cuda) share: a template's space for one function with its fallback and
/// how a config becomes steps; their thread-tile knobs; the per-config checks against the
/// device's limits, whose errors are instantiation errors that the tuners' cost model marks
/// invalid and never proposes (FeatureCache.h); and the tuning task made of a space.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ops/GpuTiles.h"
#include "passes/GpuLimits.h"
#include "tune/autotvm/ConfigSpace.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::tune::autotvm {

/// A GPU template's space for one function, and how a config becomes steps.
struct GpuTemplateSpace {
  std::shared_ptr<const ConfigSpace> space;
  uint64_t fallback = 0;      ///< a config that runs well untuned (TVM's fallback tiles in spirit)
  uint64_t unprunedSize = 0;  ///< the space's size before pruning
  std::function<std::vector<schedule::StepPtr>(const ConfigEntity&)> instantiate;
  /// The state a config's steps make, without replaying them (TuningTask::instantiateState).
  std::function<schedule::State(const ConfigEntity&)> instantiateState;
};

/// Registers over this many accumulators per thread would spill.
inline constexpr int64_t kMaxAccumulatorsPerThread = 64;

/// The largest divisor of `n` that is at most `cap` (1 at least).
int64_t largestDivisorAtMost(int64_t n, int64_t cap);

/// Defines the split knob `name` of an axis into [blocks, threads, per thread] (factors), with
/// at most `maxThreads` threads and `maxInner` per thread, `include` kept whatever; multiplies
/// `unpruned` by the number of splits without those bounds.
void defineThreadTile(ConfigSpace& space, const std::string& name, int64_t extent, int64_t maxThreads, int64_t maxInner,
                      const std::vector<int64_t>& include, double& unpruned);

/// Defines the split knob `name` of an axis into [outer, inner] (factors), inner at most
/// `maxInner`, `include` kept whatever; multiplies `unpruned` by the number of splits without
/// the bound.
void defineTwoLevelSplit(ConfigSpace& space, const std::string& name, int64_t extent, int64_t maxInner,
                         const std::vector<int64_t>& include, double& unpruned);

/// auto_unroll_max_step {0, 256, 1500} and unroll_explicit {0, 1}, as TVM's depthwise and dense
/// templates define them; multiplies `unpruned` by their 6 configs.
void defineUnrollKnobs(ConfigSpace& space, double& unpruned);

/// The values of those knobs in a fallback: unrolled in the IR up to 256 steps.
void addUnrollFallback(std::map<std::string, nlohmann::json>& values);

/// The [blocks, threads, per thread] parts of a config's 3-level split knob.
std::array<int64_t, 3> threeLevels(const ConfigEntity& config, const std::string& knob);

/// The output tile of a config with the knobs tile_f, tile_y, tile_x (each [blocks, threads,
/// per thread]), auto_unroll_max_step and unroll_explicit.
ops::GpuImageTile gpuImageTileOf(const ConfigEntity& config);

/// The choice of every knob of the space from its value by knob name; Error naming the
/// template, the knob and the value when a knob has no value or the value is not an option.
std::vector<size_t> choicesOf(const ConfigSpace& space, const std::map<std::string, nlohmann::json>& values,
                              const std::string& templateName);

/// The index of the config with those values (as choicesOf).
uint64_t configIndexOf(const ConfigSpace& space, std::map<std::string, nlohmann::json> values, const std::string& templateName);

/// Instantiation errors naming the template and the limit.
void checkThreadsPerBlock(const std::string& templateName, int64_t threads, const passes::GpuLimits& limits);
void checkAccumulators(const std::string& templateName, int64_t accumulators);
void checkSharedMemory(const std::string& templateName, const schedule::State& state, const passes::GpuLimits& limits);

/// instantiate and instantiateState of a template whose schedule of a config (checks included)
/// returns both.
void setSchedule(GpuTemplateSpace& t, std::function<ops::GpuTileSchedule(const ConfigEntity&)> schedule);

/// True when `f` returns without an Error (a template's `applies`: its shape function accepts).
bool succeeds(const std::function<void()>& f);

/// The tuning task of a template's space: the MeasureTask with the limits, the fallback not the
/// default schedule (the CLI tunes gpu_default beside it).
TuningTaskPtr makeGpuTemplateTask(const std::string& name, const std::string& templateName, const te::ComputeDAG& dag,
                                  const target::Target& target, const passes::GpuLimits& limits, const GpuTemplateSpace& t);

}  // namespace tessel::tune::autotvm
