#include "tune/ansor/Sketches.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "support/Error.h"
#include "tune/ansor/DagAnalysis.h"
#include "tune/ansor/GpuSketches.h"
#include "tune/ansor/SketchBuilding.h"

namespace tessel::tune::ansor {

using namespace schedule;

namespace {

using sketching::PartialSketch;
using sketching::TileStructure;

/// A CPU sketch being made: the shared parts, and the stages already given a cache stage.
struct Partial : PartialSketch {
  std::set<std::string> cacheWritten;
};

enum class Outcome { Skip, Apply, ApplyAndSkipRest };

struct RuleResult {
  Outcome outcome = Outcome::Skip;
  std::vector<Partial> next;
};

class SketchGenerator {
 public:
  SketchGenerator(const te::ComputeDAG& dag, const SketchOptions& options)
      : dag_(dag), options_(options), structure_(options.tileStructure) {
    for (int level : options.fusionLevels)
      TESSEL_CHECK(level >= 1 && size_t(level) < structure_.spatialLevels, "fusion level {} is outside [1, {}) (the spatial tile levels)",
                   level, structure_.spatialLevels);
  }

  std::vector<Sketch> run() {
    Partial start;
    start.state = State(dag_);
    start.state.inferBounds();
    start.stage = int(start.state.stages().size()) - 1;
    expand(std::move(start));
    return sketches_;
  }

 private:
  void expand(Partial p) {
    if (p.stage < 0) {
      std::string description = p.describe();
      sketches_.push_back({std::move(p.steps), std::move(description), {}});
      return;
    }
    const Stage& s = p.state.stages()[size_t(p.stage)];
    if (s.isPlaceholder() || s.attach == AttachKind::Inline) return expand(next(std::move(p)));
    std::string stage = s.name();
    using Rule = RuleResult (SketchGenerator::*)(const Partial&, const std::string&);
    for (Rule rule : {&SketchGenerator::alwaysInline, &SketchGenerator::addRfactor, &SketchGenerator::addCacheWrite,
                      &SketchGenerator::tilingWithFusion, &SketchGenerator::multiLevelTiling}) {
      RuleResult result = (this->*rule)(p, stage);
      for (auto& n : result.next) expand(std::move(n));
      if (result.outcome == Outcome::ApplyAndSkipRest) return;
    }
    expand(next(std::move(p)));  // skip the stage
  }

  static Partial next(Partial p) {
    --p.stage;
    return p;
  }

  // ---- the rules ---------------------------------------------------------------------------

  RuleResult alwaysInline(const Partial& p, const std::string& stage) {
    if (!isStrictlyInlinable(p.state, stage)) return {};
    Partial n = p;
    n.apply(std::make_shared<ComputeInlineStep>(stage));
    n.description.push_back("inline " + stage);
    return {Outcome::ApplyAndSkipRest, {next(std::move(n))}};
  }

  RuleResult addRfactor(const Partial& p, const std::string& stage) {
    const Stage& s = p.state.stage(stage);
    // The rfactor step factors one reduce axis (or a part of its split).
    bool oneReduceAxis = s.op->reduction() && s.op->reduction()->axes.size() == 1;
    if (!oneReduceAxis || p.cacheWritten.count(stage) || !s.relations.empty() || !needsRfactor(p.state, stage, options_.cores))
      return {};
    std::string axis = s.iterator(s.rootCount - 1).name;
    RuleResult result{Outcome::Apply, {}};
    for (int part = 0; part < 2; ++part) {
      Partial n = p;
      auto parts = sketching::splitInto(n, stage, axis, std::make_shared<SplitStep>(stage, axis, std::vector<int64_t>{1}), 2);
      n.apply(std::make_shared<RfactorStep>(stage, parts[size_t(part)]));
      n.description.push_back(fmt::format("rfactor {} at {}", stage, parts[size_t(part)]));
      // The rfactor stage now sits at this index, the stage after it: both are done.
      result.next.push_back(next(std::move(n)));
    }
    return result;
  }

  RuleResult addCacheWrite(const Partial& p, const std::string& stage) {
    if (p.cacheWritten.count(stage) || !needsMultiLevelTiling(p.state, stage) || fusibleConsumer(p.state, stage)) return {};
    Partial n = p;
    n.apply(std::make_shared<CacheWriteStep>(stage, "local"));
    // The cache stage took this index; the rules visit it next, with the copy as its consumer.
    n.cacheWritten.insert(stage);
    n.cacheWritten.insert(n.stageName());
    n.description.push_back("cache write " + stage);
    return {Outcome::Apply, {std::move(n)}};
  }

  RuleResult tilingWithFusion(const Partial& p, const std::string& stage) {
    if (!needsMultiLevelTiling(p.state, stage)) return {};
    auto consumer = fusibleConsumer(p.state, stage);
    if (!consumer || !p.state.stage(*consumer).relations.empty()) return {};
    RuleResult result{p.cacheWritten.count(stage) ? Outcome::ApplyAndSkipRest : Outcome::Apply, {}};
    for (int level : options_.fusionLevels) {
      Partial n = p;
      auto tiled = sketching::tileStage(n, stage, structure_).spatialAxes;
      if (tiled.empty()) return {};  // no spatial axis to share
      sketching::fuseIntoConsumer(n, stage, *consumer, tiled, level);
      n.description.push_back(fmt::format("tile {} ({}) in {} at level {}", stage, options_.tileStructure, *consumer, level));
      result.next.push_back(next(std::move(n)));
    }
    return result;
  }

  RuleResult multiLevelTiling(const Partial& p, const std::string& stage) {
    if (!needsMultiLevelTiling(p.state, stage)) return {};
    Partial n = p;
    sketching::tileStage(n, stage, structure_);
    n.description.push_back(fmt::format("tile {} ({})", stage, options_.tileStructure));
    return {Outcome::ApplyAndSkipRest, {next(std::move(n))}};
  }

  const te::ComputeDAG& dag_;
  SketchOptions options_;
  TileStructure structure_;
  std::vector<Sketch> sketches_;
};

}  // namespace

SketchOptions SketchOptions::forGpu(const passes::GpuLimits& limits) {
  SketchOptions options;
  options.tileStructure = "SSSRRSRS";
  options.fusionLevels = {3};
  options.gpu = limits;
  return options;
}

std::vector<Sketch> generateSketches(const te::ComputeDAG& dag, const SketchOptions& options) {
  if (options.gpu) return generateGpuSketches(dag, options);
  return SketchGenerator(dag, options).run();
}

}  // namespace tessel::tune::ansor
