#include "tune/autotvm/Features.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "support/Error.h"
#include "tune/autotvm/LoopStats.h"
#include "tune/autotvm/LoopSummary.h"
#include "tune/autotvm/MachineFeatures.h"

namespace tessel::tune::autotvm {

FeatureType parseFeatureType(const std::string& name) {
  if (name == "knob") return FeatureType::Knob;
  if (name == "itervar") return FeatureType::Itervar;
  if (name == "curve") return FeatureType::Curve;
  fail("Invalid feature type: {} (expected knob, itervar or curve)", name);
}

const char* featureTypeName(FeatureType type) {
  switch (type) {
    case FeatureType::Knob: return "knob";
    case FeatureType::Itervar: return "itervar";
    case FeatureType::Curve: return "curve";
  }
  return "?";
}

namespace {

size_t splitParts(const Knob& knob) {
  return knob.kind == KnobKind::Split && !knob.options.empty() && knob.options[0].is_array() ? knob.options[0].size() : 0;
}

constexpr int kMaxAccesses = 4;  // the store and the first three loads

/// Stages by work, heaviest first (stable: ties keep stage order).
std::vector<StageSummary> stagesByWork(const schedule::State& state) {
  std::vector<StageSummary> stages = summarizeLoops(state);
  std::stable_sort(stages.begin(), stages.end(),
                   [](const StageSummary& a, const StageSummary& b) { return a.iterations() > b.iterations(); });
  return stages;
}

// ---- itervar ------------------------------------------------------------------------------

constexpr size_t kItervarStages = 3, kItervarLoops = 10, kPerLoop = 9 + kMaxAccesses * 3;
constexpr size_t kPerStage = 2 + kItervarLoops * kPerLoop + kMachineStageLength;
static_assert(kItervarLength == kItervarStages * kPerStage);

void itervarStage(const StageSummary& stage, const target::CpuMachine* machine, float* out) {
  std::vector<LoopStats> stats = loopStats(stage);
  machineStageFeatures(stage, stats, machine, out + 2 + kItervarLoops * kPerLoop);
  out[0] = logScale(stage.iterations());
  out[1] = logScale(double(stats.size()));
  size_t kept = std::min(stats.size(), kItervarLoops);
  for (size_t k = 0; k < kept; ++k) {
    const LoopStats& s = stats[stats.size() - kept + k];
    float* slot = out + 2 + (kItervarLoops - kept + k) * kPerLoop;
    slot[0] = 1;
    slot[1] = logScale(double(s.loop.extent));
    slot[2 + int(classify(s.loop.annotation))] = 1;
    slot[6] = s.loop.reduce ? 1 : 0;
    slot[7] = logScale(s.above);
    slot[8] = logScale(s.below);
    for (size_t a = 0; a < s.accesses.size() && a < size_t(kMaxAccesses); ++a) {
      slot[9 + 3 * a] = logScale(s.accesses[a].strideBytes);
      slot[10 + 3 * a] = logScale(s.accesses[a].touchedBytes);
      slot[11 + 3 * a] = logScale(s.accesses[a].reuse);
    }
  }
}

// ---- curve --------------------------------------------------------------------------------

constexpr size_t kCurveStages = 2, kCurveSamples = 20, kCurveHeader = 5;
constexpr size_t kCurvePerStage = kCurveHeader + kMaxAccesses * 2 * kCurveSamples + kMachineStageLength;
static_assert(kCurveLength == kCurveStages * kCurvePerStage);
constexpr double kCurveStep = 2.0;  // sample k at a footprint of 2^(k * step) bytes

void curveStage(const StageSummary& stage, const target::CpuMachine* machine, float* out) {
  std::vector<LoopStats> stats = loopStats(stage);
  machineStageFeatures(stage, stats, machine, out + kCurveHeader + kMaxAccesses * 2 * kCurveSamples);
  double parallel = 1, vector = 1, unroll = 1;
  for (const LoopStats& s : stats) {
    LoopClass c = classify(s.loop.annotation);
    double extent = double(s.loop.extent);
    if (c == LoopClass::Parallel) parallel *= extent;
    if (c == LoopClass::Vectorize) vector *= extent;
    if (c == LoopClass::Unroll) unroll *= extent;
  }
  out[0] = logScale(stage.iterations());
  out[1] = logScale(parallel);
  out[2] = logScale(vector);
  out[3] = logScale(unroll);
  out[4] = logScale(double(stats.size()));
  for (size_t a = 0; a < stage.accesses.size() && a < size_t(kMaxAccesses); ++a) {
    float* reuseCurve = out + kCurveHeader + a * 2 * kCurveSamples;
    float* countCurve = reuseCurve + kCurveSamples;
    // Walking outwards the footprint only grows: the best reuse (and count) reachable within a
    // footprint of 2^x bytes is a step function of x.
    for (size_t i = stats.size(); i-- > 0;) {
      const AccessStats& s = stats[i].accesses[a];
      double x = std::log2(1.0 + s.touchedBytes);
      for (size_t k = 0; k < kCurveSamples; ++k) {
        if (double(k) * kCurveStep + 1e-9 < x) continue;
        reuseCurve[k] = std::max(reuseCurve[k], logScale(s.reuse));
        countCurve[k] = std::max(countCurve[k], logScale(s.count));
      }
    }
  }
}

}  // namespace

size_t knobFeatureLength(const ConfigSpace& space) {
  size_t length = 0;
  for (const Knob& knob : space.knobs()) length += 1 + splitParts(knob);
  return length;
}

std::vector<float> knobFeatures(const ConfigEntity& config, const ConfigSpace& space) {
  std::vector<float> out;
  out.reserve(knobFeatureLength(space));
  const std::vector<Knob>& knobs = space.knobs();
  for (size_t k = 0; k < knobs.size(); ++k) {
    size_t choice = config.choices().at(k);
    out.push_back(float(choice));
    size_t parts = splitParts(knobs[k]);
    for (size_t p = 0; p < parts; ++p) {
      const nlohmann::json& factor = knobs[k].options[choice][p];
      out.push_back(factor.is_number() ? float(std::log2(std::max(1.0, factor.get<double>()))) : 0.f);
    }
  }
  return out;
}

std::vector<float> itervarFeatures(const schedule::State& state, const target::CpuMachine* machine) {
  std::vector<float> out(kItervarLength, 0.f);
  std::vector<StageSummary> stages = stagesByWork(state);
  for (size_t s = 0; s < stages.size() && s < kItervarStages; ++s) itervarStage(stages[s], machine, out.data() + s * kPerStage);
  return out;
}

std::vector<float> curveFeatures(const schedule::State& state, const target::CpuMachine* machine) {
  std::vector<float> out(kCurveLength, 0.f);
  std::vector<StageSummary> stages = stagesByWork(state);
  for (size_t s = 0; s < stages.size() && s < kCurveStages; ++s) curveStage(stages[s], machine, out.data() + s * kCurvePerStage);
  return out;
}

}  // namespace tessel::tune::autotvm
