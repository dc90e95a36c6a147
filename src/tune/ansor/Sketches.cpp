#include "tune/ansor/Sketches.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "support/Error.h"
#include "tune/ansor/DagAnalysis.h"

namespace tessel::tune::ansor {

using namespace schedule;

namespace {

/// A sketch being made: its steps so far, the state they give, the stage the rules look at
/// next (an index into the state's stages, counting down) and the stages already given a
/// cache stage.
struct Partial {
  std::vector<StepPtr> steps;
  State state;
  int stage = 0;
  std::vector<std::string> description;
  std::set<std::string> cacheWritten;

  void apply(StepPtr step) {
    step->apply(state);
    steps.push_back(std::move(step));
  }
  const std::string& stageName() const { return state.stages()[size_t(stage)].name(); }
};

enum class Outcome { Skip, Apply, ApplyAndSkipRest };

struct RuleResult {
  Outcome outcome = Outcome::Skip;
  std::vector<Partial> next;
};

/// Splits `iterator` with `step`, which makes `levels` loops in its place; returns their names.
std::vector<std::string> splitInto(Partial& p, const std::string& stage, const std::string& iterator, StepPtr step, size_t levels) {
  int position = p.state.stage(stage).leafPosition(p.state.stage(stage).leafByName(iterator));
  p.apply(std::move(step));
  const Stage& s = p.state.stage(stage);
  std::vector<std::string> names;
  for (size_t l = 0; l < levels; ++l) names.push_back(s.iterator(s.leaves[size_t(position) + l]).name);
  return names;
}

/// A stage's spatial root axes as the sketch rules treat them: the axes of extent 1 are left
/// whole (outermost), the others are tiled.
struct RootAxes {
  std::vector<std::string> unitSpatial, unitReduce, spatial, reduce;
};

RootAxes rootAxes(const Stage& s) {
  RootAxes axes;
  for (int r = 0; r < s.rootCount; ++r) {
    const Iterator& it = s.iterator(r);
    bool spatial = it.kind == IteratorKind::Spatial;
    if (it.extent <= 1) (spatial ? axes.unitSpatial : axes.unitReduce).push_back(it.name);
    else (spatial ? axes.spatial : axes.reduce).push_back(it.name);
  }
  return axes;
}

class SketchGenerator {
 public:
  SketchGenerator(const te::ComputeDAG& dag, const SketchOptions& options) : dag_(dag), options_(options) {
    for (char c : options.tileStructure)
      TESSEL_CHECK(c == 'S' || c == 'R', "tile structure '{}': only S (spatial) and R (reduce) levels exist", options.tileStructure);
    spatialLevels_ = size_t(std::count(options.tileStructure.begin(), options.tileStructure.end(), 'S'));
    reduceLevels_ = options.tileStructure.size() - spatialLevels_;
    TESSEL_CHECK(spatialLevels_ >= 1 && reduceLevels_ >= 1, "tile structure '{}' needs an S and an R level", options.tileStructure);
    for (int level : options.fusionLevels)
      TESSEL_CHECK(level >= 1 && size_t(level) < spatialLevels_, "fusion level {} is outside [1, {}) (the spatial tile levels)",
                   level, spatialLevels_);
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
      std::string description;
      for (auto& d : p.description) description += (description.empty() ? "" : "; ") + d;
      sketches_.push_back({std::move(p.steps), description.empty() ? "no change" : description});
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
      auto parts = splitInto(n, stage, axis, std::make_shared<SplitStep>(stage, axis, std::vector<int64_t>{1}), 2);
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
      auto tiled = tile(n, stage);
      if (tiled.empty()) return {};  // no spatial axis to share
      fuseIntoConsumer(n, stage, *consumer, tiled, level);
      n.description.push_back(fmt::format("tile {} ({}) in {} at level {}", stage, options_.tileStructure, *consumer, level));
      result.next.push_back(next(std::move(n)));
    }
    return result;
  }

  RuleResult multiLevelTiling(const Partial& p, const std::string& stage) {
    if (!needsMultiLevelTiling(p.state, stage)) return {};
    Partial n = p;
    tile(n, stage);
    n.description.push_back(fmt::format("tile {} ({})", stage, options_.tileStructure));
    return {Outcome::ApplyAndSkipRest, {next(std::move(n))}};
  }

  // ---- tiling ------------------------------------------------------------------------------

  /// Splits every non-unit axis of the stage into its levels of the tile structure and orders
  /// the loops level by level. Returns the tiled spatial axes (root names).
  std::vector<std::string> tile(Partial& p, const std::string& stage) {
    RootAxes axes = rootAxes(p.state.stage(stage));
    std::vector<std::vector<std::string>> spatialLoops, reduceLoops;  // per axis, outermost level first
    for (auto& a : axes.spatial)
      spatialLoops.push_back(spatialLevels_ == 1 ? std::vector<std::string>{a}
                                                 : splitInto(p, stage, a, holeSplit(stage, a, spatialLevels_), spatialLevels_));
    for (auto& a : axes.reduce)
      reduceLoops.push_back(reduceLevels_ == 1 ? std::vector<std::string>{a}
                                               : splitInto(p, stage, a, holeSplit(stage, a, reduceLevels_), reduceLevels_));
    std::vector<std::string> order = axes.unitSpatial;
    size_t s = 0, r = 0;
    for (char level : options_.tileStructure) {
      // Unit reduce loops go just before the first reduce level: outside it they would end the
      // run of outer spatial loops that parallelization fuses.
      if (level == 'R' && r == 0) order.insert(order.end(), axes.unitReduce.begin(), axes.unitReduce.end());
      auto& loops = level == 'S' ? spatialLoops : reduceLoops;
      size_t l = level == 'S' ? s++ : r++;
      for (auto& axisLoops : loops) order.push_back(axisLoops[l]);
    }
    if (order.size() >= 2) p.apply(std::make_shared<ReorderStep>(stage, order));
    return axes.spatial;
  }

  static StepPtr holeSplit(const std::string& stage, const std::string& axis, size_t levels) {
    return std::make_shared<SplitStep>(stage, axis, std::vector<int64_t>(levels - 1, 1));
  }

  /// Splits the consumer's axes like the producer's outer `level` tile levels (the innermost of
  /// its level + 1 loops covers the rest) and computes the producer inside them.
  void fuseIntoConsumer(Partial& p, const std::string& producer, const std::string& consumer,
                        const std::vector<std::string>& tiledAxes, int level) {
    const Stage& ps = p.state.stage(producer);
    const Stage& cs = p.state.stage(consumer);
    // The consumer reads the producer at its own axes, in order: axis d matches axis d.
    std::vector<std::pair<std::string, std::string>> pairs;  // producer axis, consumer axis
    std::vector<std::string> order;
    for (size_t d = 0; d < ps.op->axes.size(); ++d) {
      const std::string& name = ps.iterator(int(d)).name;
      if (std::find(tiledAxes.begin(), tiledAxes.end(), name) != tiledAxes.end()) pairs.emplace_back(name, cs.iterator(int(d)).name);
      else order.push_back(cs.iterator(int(d)).name);
    }
    std::vector<std::vector<std::string>> loops;
    for (auto& [source, axis] : pairs)
      loops.push_back(splitInto(p, consumer, axis, std::make_shared<FollowSplitStep>(consumer, axis, producer, source, level + 1),
                                size_t(level) + 1));
    for (size_t l = 0; l <= size_t(level); ++l)
      for (auto& axisLoops : loops) order.push_back(axisLoops[l]);
    if (order.size() >= 2) p.apply(std::make_shared<ReorderStep>(consumer, order));
    p.apply(std::make_shared<ComputeAtStep>(producer, consumer, loops.back()[size_t(level) - 1]));
  }

  const te::ComputeDAG& dag_;
  SketchOptions options_;
  size_t spatialLevels_ = 0, reduceLevels_ = 0;
  std::vector<Sketch> sketches_;
};

}  // namespace

std::vector<Sketch> generateSketches(const te::ComputeDAG& dag, const SketchOptions& options) {
  return SketchGenerator(dag, options).run();
}

}  // namespace tessel::tune::ansor
