// The random proposals of the schedule fuzzer (see StepGenerator.h).
#include "fuzz/StepGenerator.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "support/Error.h"

namespace tessel::fuzz {

using namespace schedule;

void StepStats::add(const StepStats& other) {
  for (auto& [k, v] : other.accepted) accepted[k] += v;
  for (auto& [k, v] : other.rejected) rejected[k] += v;
  lists += other.lists;
  steps += other.steps;
}

std::string StepStats::table() const {
  std::string out = fmt::format("{} step lists, {} steps ({:.1f} per list)\n", lists, steps,
                                lists ? double(steps) / double(lists) : 0.0);
  out += fmt::format("  {:<30}{:>10}{:>10}\n", "step", "accepted", "rejected");
  for (auto& label : allStepLabels()) {
    auto a = accepted.find(label), r = rejected.find(label);
    out += fmt::format("  {:<30}{:>10}{:>10}\n", label, a == accepted.end() ? 0 : a->second,
                       r == rejected.end() ? 0 : r->second);
  }
  return out;
}

const std::vector<std::string>& allStepLabels() {
  static const std::vector<std::string> labels = {
      "split.factors",     "split.multi",        "split.nparts",   "fuse",
      "reorder",           "annotate.parallel",  "annotate.vectorize", "annotate.unroll",
      "pragma.auto_unroll_max_step", "pragma.other", "compute_at", "compute_inline",
      "compute_root",      "cache_read",         "cache_write",    "rfactor",
      "storage_align",     "follow_split"};
  return labels;
}

std::string stepLabel(const Step& step) {
  if (auto s = dynamic_cast<const SplitStep*>(&step))
    return s->nparts > 0 ? "split.nparts" : (s->factors.size() > 1 ? "split.multi" : "split.factors");
  if (auto s = dynamic_cast<const AnnotateStep*>(&step)) return std::string("annotate.") + annotationName(s->annotation);
  if (auto s = dynamic_cast<const PragmaStep*>(&step))
    return s->key == "auto_unroll_max_step" ? "pragma.auto_unroll_max_step" : "pragma.other";
  return step.kind();
}

namespace {

/// Thrown by a proposal that finds nothing to work on in the current state.
struct NoCandidate {};

/// A tentative run of steps. Each step is applied to a copy of the state and committed only if
/// it succeeds, so `state` is always the result of `steps`, whatever fails later.
struct Attempt {
  State state;
  std::vector<StepPtr> steps;
  StepPtr current;  // the step being applied: the one to blame when applying it throws

  void apply(const StepPtr& step) {
    current = step;
    State next = state;
    step->apply(next);
    // Lowering refuses a vectorized loop whose extent varies with the enclosing loops (a later
    // compute_at can make it so); rejecting that step here keeps every list lowerable.
    for (auto& s : next.stages())
      for (int leaf : s.leaves)
        if (s.iterator(leaf).annotation == Annotation::Vectorize && !s.iterator(leaf).exactExtent)
          fail("vectorized {}.{} no longer has a constant extent", s.name(), s.iterator(leaf).name);
    state = std::move(next);
    steps.push_back(step);
    current = nullptr;
  }
};

using StageFilter = std::function<bool(const Stage&)>;

bool hasLoops(const Stage& s) { return !s.isPlaceholder() && s.attach != AttachKind::Inline; }

class Generator {
 public:
  Generator(const te::ComputeDAG& dag, uint64_t seed, StepStats& stats) : rng_(seed), stats_(stats) {
    result_.state = replay(dag, {});
  }

  GeneratedSteps run(int minSteps, int maxSteps) {
    int target = uniform(minSteps, maxSteps);
    for (int tries = 0; int(result_.steps.size()) < target && tries < 10 * target && result_.bug.empty(); ++tries)
      propose(int(result_.steps.size()));
    ++stats_.lists;
    stats_.steps += int64_t(result_.steps.size());
    return std::move(result_);
  }

 private:
  using Proposal = void (Generator::*)(Attempt&);

  void propose(int position) {
    // Steps that must come first on a stage (cache_write, rfactor) or that reshape the DAG are
    // likelier at the start of a list, where they still apply.
    bool early = position < 2;
    struct Choice {
      double weight;
      Proposal proposal;
    };
    const std::vector<Choice> choices = {
        {5, &Generator::split},          {2, &Generator::fuse},
        {2.5, &Generator::reorder},      {2, &Generator::parallel},
        {3, &Generator::vectorize},      {2, &Generator::unroll},
        {1.2, &Generator::pragma},       {3, &Generator::computeAt},
        {early ? 3.0 : 1.0, &Generator::computeInline},
        {1, &Generator::computeRoot},    {early ? 2.5 : 1.0, &Generator::cacheRead},
        {early ? 3.0 : 0.5, &Generator::cacheWrite},
        {early ? 3.0 : 0.5, &Generator::rfactor},
        {0.5, &Generator::storageAlign},
        {1.5, &Generator::followSplit},
    };
    std::vector<double> weights;
    for (auto& c : choices) weights.push_back(c.weight);
    std::discrete_distribution<size_t> which(weights.begin(), weights.end());
    attempt(choices[which(rng_)].proposal);
  }

  /// Runs a proposal; keeps the steps it applied successfully. A tessel::Error is the schedule
  /// language rejecting a step (counted, dropped); anything else is a bug.
  void attempt(Proposal proposal) {
    Attempt a{result_.state, {}, nullptr};
    try {
      (this->*proposal)(a);
    } catch (const NoCandidate&) {
    } catch (const Error& e) {
      std::string message = e.what();
      if (message.find("internal error") != std::string::npos) return recordBug(a, message);
      if (a.current) ++stats_.rejected[stepLabel(*a.current)];
    } catch (const std::exception& e) {
      return recordBug(a, fmt::format("unexpected exception: {}", e.what()));
    }
    for (auto& s : a.steps) ++stats_.accepted[stepLabel(*s)];
    result_.steps.insert(result_.steps.end(), a.steps.begin(), a.steps.end());
    result_.state = std::move(a.state);
  }

  void recordBug(const Attempt& a, const std::string& message) {
    result_.steps.insert(result_.steps.end(), a.steps.begin(), a.steps.end());
    if (a.current) result_.steps.push_back(a.current);
    result_.bug = message;
  }

  // ---- random choices ------------------------------------------------------------------------

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <class T>
  T pick(const std::vector<T>& items) {
    if (items.empty()) throw NoCandidate{};
    return items[size_t(uniform(0, int(items.size()) - 1))];
  }

  static std::vector<std::string> stagesWhere(const State& state, const StageFilter& keep) {
    std::vector<std::string> names;
    for (auto& s : state.stages())
      if (keep(s)) names.push_back(s.name());
    return names;
  }

  static std::vector<std::string> leafNames(const Stage& s, const std::function<bool(const Iterator&)>& keep = nullptr) {
    std::vector<std::string> names;
    for (int id : s.leaves)
      if (!keep || keep(s.iterator(id))) names.push_back(s.iterator(id).name);
    return names;
  }

  std::string loopStage(const State& state) { return pick(stagesWhere(state, hasLoops)); }

  /// A split factor: often a divisor, often not (guards, partitioned tails), sometimes larger
  /// than the extent (one outer iteration).
  int64_t randomFactor(int64_t extent) {
    std::vector<int64_t> divisors;
    for (int64_t d = 2; d < extent; ++d)
      if (extent % d == 0) divisors.push_back(d);
    int r = uniform(0, 9);
    if (r < 4 && !divisors.empty()) return pick(divisors);
    if (r < 8) return pick(std::vector<int64_t>{2, 3, 4, 5, 8, 16});
    return uniform(1, int(std::max<int64_t>(extent, 1)) + 1);
  }

  StepPtr randomSplit(const std::string& stage, const std::string& iterator, int64_t extent) {
    int mode = uniform(0, 9);
    if (mode < 5) return std::make_shared<SplitStep>(stage, iterator, std::vector<int64_t>{randomFactor(extent)});
    if (mode < 8) {
      std::vector<int64_t> factors;
      int levels = chance(0.75) ? 2 : 3;
      for (int l = 0; l < levels; ++l) factors.push_back(pick(std::vector<int64_t>{1, 2, 3, 4, 8}));
      return std::make_shared<SplitStep>(stage, iterator, factors);
    }
    return std::make_shared<SplitStep>(stage, iterator, std::vector<int64_t>{}, int64_t(uniform(1, int(std::max<int64_t>(extent, 1)))));
  }

  /// Splits a leaf by one factor; returns the names of the outer and inner parts.
  std::pair<std::string, std::string> splitOnce(Attempt& a, const std::string& stage, std::string leaf, int64_t factor) {
    int position = a.state.stage(stage).leafPosition(a.state.stage(stage).leafByName(leaf));
    a.apply(std::make_shared<SplitStep>(stage, leaf, std::vector<int64_t>{factor}));
    const Stage& s = a.state.stage(stage);
    return {s.iterator(s.leaves[size_t(position)]).name, s.iterator(s.leaves[size_t(position) + 1]).name};
  }

  // ---- proposals -----------------------------------------------------------------------------

  void split(Attempt& a) {
    std::string stage = loopStage(a.state);
    const Stage& s = a.state.stage(stage);
    const Iterator& it = s.iterator(pick(s.leaves));
    a.apply(randomSplit(stage, it.name, it.extent));
  }

  void fuse(Attempt& a) {
    std::string stage = loopStage(a.state);
    const Stage& s = a.state.stage(stage);
    auto kindAt = [&](size_t p) { return s.iterator(s.leaves[p]).kind; };
    std::vector<int> starts;
    for (size_t p = 0; p + 1 < s.leaves.size(); ++p)
      if (kindAt(p) == kindAt(p + 1)) starts.push_back(int(p));
    size_t first = size_t(pick(starts));
    size_t count = (first + 2 < s.leaves.size() && kindAt(first + 2) == kindAt(first) && chance(0.3)) ? 3 : 2;
    std::vector<std::string> names;
    for (size_t p = first; p < first + count; ++p) names.push_back(s.iterator(s.leaves[p]).name);
    a.apply(std::make_shared<FuseStep>(stage, names));
  }

  void reorder(Attempt& a) {
    std::string stage = loopStage(a.state);
    auto names = leafNames(a.state.stage(stage));
    if (names.size() < 2) throw NoCandidate{};
    std::shuffle(names.begin(), names.end(), rng_);
    if (chance(0.5)) names.resize(size_t(uniform(2, int(names.size()))));
    a.apply(std::make_shared<ReorderStep>(stage, names));
  }

  void parallel(Attempt& a) {
    std::string stage = loopStage(a.state);
    auto spatial = leafNames(a.state.stage(stage), [](const Iterator& it) { return it.kind == IteratorKind::Spatial; });
    std::string leaf = chance(0.6) && !spatial.empty() ? spatial.front() : pick(spatial);
    a.apply(std::make_shared<AnnotateStep>(stage, leaf, Annotation::Parallel));
  }

  void vectorize(Attempt& a) {
    std::string stage = loopStage(a.state);
    const Stage& s = a.state.stage(stage);
    const Iterator* it = &s.iterator(s.leaves.back());
    if (it->kind == IteratorKind::Reduce || chance(0.25)) {
      auto spatial = leafNames(s, [](const Iterator& i) { return i.kind == IteratorKind::Spatial; });
      it = &s.iterator(s.leafByName(pick(spatial)));
    }
    std::string leaf = it->name;
    int64_t extent = it->extent;
    // Too wide for one vector, or just a common tiling pattern: split and vectorize the inner part.
    if (extent > 64 || (extent > 4 && chance(0.35))) leaf = splitOnce(a, stage, leaf, pick(std::vector<int64_t>{4, 8, 16})).second;
    a.apply(std::make_shared<AnnotateStep>(stage, leaf, Annotation::Vectorize));
  }

  void unroll(Attempt& a) {
    std::string stage = loopStage(a.state);
    const Stage& s = a.state.stage(stage);
    // Nested explicit unrolls multiply; keep the unrolled body small so the batch compiles fast.
    int64_t unrolled = 1;
    for (int id : s.leaves)
      if (s.iterator(id).annotation == Annotation::Unroll) unrolled *= s.iterator(id).extent;
    auto small = leafNames(s, [&](const Iterator& it) { return it.extent * unrolled <= 64 && it.annotation != Annotation::Unroll; });
    a.apply(std::make_shared<AnnotateStep>(stage, pick(small), Annotation::Unroll));
  }

  void pragma(Attempt& a) {
    std::string stage = loopStage(a.state);
    auto leaves = leafNames(a.state.stage(stage));
    std::string leaf = chance(0.7) && !leaves.empty() ? leaves.front() : pick(leaves);
    if (chance(0.85)) {
      int64_t value = pick(std::vector<int64_t>{0, 8, 16, 64, 512});
      a.apply(std::make_shared<PragmaStep>(stage, leaf, "auto_unroll_max_step", std::to_string(value)));
    } else {
      a.apply(std::make_shared<PragmaStep>(stage, leaf, "fuzz_note", "free form"));
    }
  }

  /// compute_at of `stage` into one of its consumers (usually) or any other stage (to exercise
  /// the rejection), at a random loop.
  void computeAtSomewhere(Attempt& a, const std::string& stage) {
    auto consumers = a.state.effectiveConsumers(stage);
    std::string target = chance(0.8) && !consumers.empty()
                             ? pick(consumers)
                             : pick(stagesWhere(a.state, [&](const Stage& s) { return hasLoops(s) && s.name() != stage; }));
    a.apply(std::make_shared<ComputeAtStep>(stage, target, pick(leafNames(a.state.stage(target)))));
  }

  void computeAt(Attempt& a) {
    computeAtSomewhere(a, pick(stagesWhere(a.state, [&](const Stage& s) { return hasLoops(s) && !a.state.isOutput(s.name()); })));
  }

  void computeInline(Attempt& a) {
    auto candidates = stagesWhere(a.state, [&](const Stage& s) {
      return hasLoops(s) && !a.state.isOutput(s.name()) && !s.op->reduction();
    });
    a.apply(std::make_shared<ComputeInlineStep>(pick(candidates)));
  }

  void computeRoot(Attempt& a) {
    auto attached = stagesWhere(a.state, [](const Stage& s) { return s.attach == AttachKind::At; });
    a.apply(std::make_shared<ComputeRootStep>(chance(0.85) && !attached.empty() ? pick(attached) : loopStage(a.state)));
  }

  void cacheRead(Attempt& a) {
    auto sources = stagesWhere(a.state, [&](const Stage& s) {
      return s.attach != AttachKind::Inline && !a.state.consumers(s.name()).empty();
    });
    std::string source = pick(sources);
    auto readers = a.state.consumers(source);
    std::shuffle(readers.begin(), readers.end(), rng_);
    readers.resize(size_t(uniform(1, int(readers.size()))));
    a.apply(std::make_shared<CacheReadStep>(source, "local", readers));
    // The cache stage sits right after its source.
    std::string cache = a.state.stages()[size_t(a.state.stageIndex(source) + 1)].name();
    if (chance(0.6)) computeAtSomewhere(a, cache);
  }

  void cacheWrite(Attempt& a) {
    std::string stage = pick(stagesWhere(a.state, [](const Stage& s) { return hasLoops(s) && s.relations.empty(); }));
    a.apply(std::make_shared<CacheWriteStep>(stage, "local"));
    // The cache stage sits right before the stage; usually computed in a tile of it.
    std::string cache = a.state.stages()[size_t(a.state.stageIndex(stage) - 1)].name();
    if (!chance(0.7)) return;
    if (chance(0.6)) {
      const Stage& s = a.state.stage(stage);
      const Iterator& it = s.iterator(pick(s.leaves));
      splitOnce(a, stage, it.name, randomFactor(it.extent));
    }
    a.apply(std::make_shared<ComputeAtStep>(cache, stage, pick(leafNames(a.state.stage(stage)))));
  }

  void rfactor(Attempt& a) {
    std::string stage = pick(stagesWhere(a.state, [](const Stage& s) {
      return hasLoops(s) && s.op->reduction() && s.relations.empty();
    }));
    const Stage& s = a.state.stage(stage);
    auto reduce = leafNames(s, [](const Iterator& it) { return it.kind == IteratorKind::Reduce; });
    std::string leaf = pick(reduce);
    if (chance(0.65)) {
      auto [outer, inner] = splitOnce(a, stage, leaf, randomFactor(a.state.stage(stage).iterator(s.leafByName(leaf)).extent));
      leaf = chance(0.6) ? inner : outer;
    }
    a.apply(std::make_shared<RfactorStep>(stage, leaf));
    std::string rf = a.state.stages()[size_t(a.state.stageIndex(stage) - 1)].name();
    if (chance(0.4)) a.apply(std::make_shared<ComputeAtStep>(rf, stage, pick(leafNames(a.state.stage(stage)))));
  }

  void storageAlign(Attempt& a) {
    std::string stage = pick(stagesWhere(a.state, [&](const Stage& s) {
      return hasLoops(s) && !a.state.isOutput(s.name()) && s.op->axes.size() >= 2;
    }));
    const Stage& s = a.state.stage(stage);
    std::string axis = s.iterator(uniform(0, int(s.op->axes.size()) - 2)).name;
    int64_t factor = pick(std::vector<int64_t>{2, 4, 8, 16});
    a.apply(std::make_shared<StorageAlignStep>(stage, axis, factor, uniform(0, int(factor) - 1)));
  }

  /// A loop split like an iterator some stage split by factors (what a fused consumer's tiles do).
  void followSplit(Attempt& a) {
    std::vector<std::pair<std::string, std::string>> sources;  // stage, split iterator
    for (auto& s : a.state.stages())
      if (hasLoops(s))
        for (auto& r : s.relations)
          if (r.kind == IterRelation::Kind::Split && r.factor > 0) sources.emplace_back(s.name(), s.iterator(r.parent).name);
    auto [source, iterator] = pick(sources);
    // Its levels: the chain of factor splits that starts there.
    const Stage& s = a.state.stage(source);
    int levels = 1;
    std::string current = iterator;
    for (bool more = true; more;) {
      more = false;
      for (auto& r : s.relations)
        if (r.kind == IterRelation::Kind::Split && r.factor > 0 && s.iterator(r.parent).name == current) {
          current = s.iterator(r.inner).name;
          ++levels;
          more = true;
          break;
        }
    }
    std::string stage = chance(0.5) ? source : loopStage(a.state);
    a.apply(std::make_shared<FollowSplitStep>(stage, pick(leafNames(a.state.stage(stage))), source, iterator, uniform(2, levels)));
  }

  std::mt19937_64 rng_;
  StepStats& stats_;
  GeneratedSteps result_;
};

}  // namespace

GeneratedSteps generateSteps(const te::ComputeDAG& dag, uint64_t seed, StepStats& stats, int minSteps, int maxSteps) {
  return Generator(dag, seed, stats).run(minSteps, maxSteps);
}

}  // namespace tessel::fuzz
