#include "tune/ansor/GpuSketches.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "support/Error.h"
#include "tune/ansor/DagAnalysis.h"
#include "tune/ansor/SketchBuilding.h"

namespace tessel::tune::ansor {

using namespace schedule;

namespace {

using sketching::PartialSketch;

/// The index of the thread level among a tiled split's factors: the factors are the inner
/// levels S1 .. S4 of S0 S1 S2 S3 S4, so S1 (vthread) is factor 0 and S2 (threads) factor 1.
constexpr size_t kVThreadFactor = 0, kThreadFactor = 1;

/// How an output's loops were bound.
enum class OutputLayout {
  Tiled,        ///< blockIdx.x, vthread, threadIdx.x over the tiles of a stage computed in it
  CrossThread,  ///< blockIdx.x over blocks of T outputs, threadIdx.y over them, threadIdx.x of extent 1
  Plain,        ///< blockIdx.x and threadIdx.x over the fused outputs
};

struct BoundOutput {
  OutputLayout layout = OutputLayout::Plain;
  std::string block;   ///< the blockIdx.x loop
  std::string thread;  ///< the innermost thread loop: one output's (or sub-tile's) computation goes inside
  size_t threadSplit = 0;  ///< CrossThread: the split whose factor is T, the outputs of a block
};

/// A stage tiled by the GPU structure inside its consumer's bound loops: what a cache read of
/// its inputs needs.
struct GpuTiledStage {
  std::vector<std::string> spatialAxes;  ///< the tiled spatial root axes: the cooperative fetch follows their thread level
  std::string sharedAt;                  ///< its last loop of reduce level 0 ("" without a tiled reduce axis)
};

/// A GPU sketch being made.
struct GpuPartial : PartialSketch {
  std::set<std::string> cacheWritten;               ///< stages given a cache stage, and their cache stages
  std::set<std::string> crossThread;                ///< reductions shared across threads, and their partial sums
  std::map<std::string, GpuTiledStage> tiled;       ///< stages tiled inside bound loops
  std::map<std::string, BoundOutput> outputs;       ///< outputs whose loops a rule bound
  std::vector<TileProductBound> bounds;
};

enum class GpuOutcome { Skip, Apply, ApplyAndSkipRest };

struct GpuRuleResult {
  GpuOutcome outcome = GpuOutcome::Skip;
  std::vector<GpuPartial> next;
};

int64_t productOf(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (auto v : values) p *= v;
  return p;
}

std::vector<std::string> leafNames(const Stage& s) {
  std::vector<std::string> names;
  for (int id : s.leaves) names.push_back(s.iterator(id).name);
  return names;
}

/// The leading spatial leaves of a stage (up to its first reduce loop).
std::vector<std::string> outerSpatialLeaves(const Stage& s) {
  std::vector<std::string> names;
  for (int id : s.leaves) {
    if (s.iterator(id).kind == IteratorKind::Reduce) break;
    names.push_back(s.iterator(id).name);
  }
  return names;
}

class GpuSketchGenerator {
 public:
  GpuSketchGenerator(const te::ComputeDAG& dag, const SketchOptions& options)
      : dag_(dag), limits_(*options.gpu), structure_(options.tileStructure) {
    TESSEL_CHECK(options.tileStructure.rfind("SSS", 0) == 0,
                 "GPU tile structure '{}': its first three levels must be spatial (blockIdx, vthread, threadIdx)",
                 options.tileStructure);
    TESSEL_CHECK(options.fusionLevels == std::vector<int>{3}, "GPU sketches fuse a tiled stage at its thread level (3) only");
  }

  std::vector<Sketch> run() {
    GpuPartial start;
    start.state = State(dag_);
    start.state.inferBounds();
    start.stage = int(start.state.stages().size()) - 1;
    expand(std::move(start));
    return sketches_;
  }

 private:
  void expand(GpuPartial p) {
    if (p.stage < 0) return finish(std::move(p));
    const Stage& s = p.state.stages()[size_t(p.stage)];
    if (s.attach == AttachKind::Inline) return expand(next(std::move(p)));
    std::string stage = s.name();
    using Rule = GpuRuleResult (GpuSketchGenerator::*)(const GpuPartial&, const std::string&);
    std::vector<Rule> rules = {&GpuSketchGenerator::addCacheRead};
    if (!s.isPlaceholder())
      rules.insert(rules.end(), {&GpuSketchGenerator::alwaysInline, &GpuSketchGenerator::crossThreadReduction,
                                 &GpuSketchGenerator::addCacheWrite, &GpuSketchGenerator::tilingWithFusion,
                                 &GpuSketchGenerator::multiLevelTiling});
    for (Rule rule : rules) {
      GpuRuleResult result = (this->*rule)(p, stage);
      for (auto& n : result.next) expand(std::move(n));
      if (result.outcome == GpuOutcome::ApplyAndSkipRest) return;
    }
    expand(next(std::move(p)));  // skip the stage
  }

  static GpuPartial next(GpuPartial p) {
    --p.stage;
    return p;
  }

  // ---- the rules ---------------------------------------------------------------------------

  GpuRuleResult addCacheRead(const GpuPartial& p, const std::string& stage) {
    auto consumers = p.state.effectiveConsumers(stage);
    if (consumers.size() != 1) return {};
    const std::string& reader = consumers.front();
    auto tiled = p.tiled.find(reader);
    if (tiled == p.tiled.end() || tiled->second.sharedAt.empty() || tiled->second.spatialAxes.empty()) return {};
    // Only a direct producer: one read through an inlined stage is copied with that stage.
    auto direct = p.state.consumers(stage);
    if (std::find(direct.begin(), direct.end(), reader) == direct.end()) return {};
    GpuPartial n = p;
    n.apply(std::make_shared<CacheReadStep>(stage, "shared", std::vector<std::string>{reader}));
    std::string shared = n.state.stages()[size_t(n.state.stageIndex(stage) + 1)].name();
    n.apply(std::make_shared<ComputeAtStep>(shared, reader, tiled->second.sharedAt));
    // Cooperative fetching: the copy's elements in order, every thread of the block taking
    // every threads-th one, so that neighbouring threads read neighbouring addresses.
    std::vector<std::string> loops = leafNames(n.state.stage(shared));
    std::string all = fuse(n, shared, loops);
    std::vector<std::pair<std::string, std::string>> sources;
    for (const auto& axis : tiled->second.spatialAxes) sources.emplace_back(reader, axis);
    auto parts = sketching::splitInto(n, shared, all, std::make_shared<FollowFusedSplitStep>(shared, all, sources, kThreadFactor), 2);
    n.apply(std::make_shared<AnnotateStep>(shared, parts[1], Annotation::ThreadX));
    n.description.push_back(fmt::format("cache read {} in shared memory for {}", stage, reader));
    return {GpuOutcome::ApplyAndSkipRest, {std::move(n)}};
  }

  GpuRuleResult alwaysInline(const GpuPartial& p, const std::string& stage) {
    const Stage& s = p.state.stage(stage);
    if (p.state.isOutput(stage) || s.op->reduction()) return {};
    GpuPartial n = p;
    n.apply(std::make_shared<ComputeInlineStep>(stage));
    n.description.push_back("inline " + stage);
    return {GpuOutcome::ApplyAndSkipRest, {next(std::move(n))}};
  }

  GpuRuleResult crossThreadReduction(const GpuPartial& p, const std::string& stage) {
    const Stage& s = p.state.stage(stage);
    const ir::ReduceNode* reduce = s.op->reduction();
    if (!reduce || p.cacheWritten.count(stage) || p.crossThread.count(stage) || !s.relations.empty() || s.attach != AttachKind::Root)
      return {};
    int64_t space = productOf(s.op->shape), length = 1;
    std::string axis;
    int64_t longest = 1;
    for (const auto& a : reduce->axes) {
      length *= a.extent;
      if (a.extent > longest) {
        longest = a.extent;
        axis = a.var.name();
      }
    }
    if (axis.empty()) return {};
    // A warp's worth of parts at least (32 where the device reports no warp, as OpenCL does):
    // a shorter reduction costs less than the barrier and the sum over shared memory.
    bool lacksParallelism = needsMultiLevelTiling(p.state, stage) ? space < length : length > std::max<int64_t>(limits_.warpSize, 32);
    if (!lacksParallelism) return {};
    auto owner = ownerOf(p.state, stage);
    if (!owner) return {};
    auto bound = p.outputs.find(*owner);
    if (bound != p.outputs.end() ? bound->second.layout != OutputLayout::CrossThread
                                 : (!p.state.stage(*owner).relations.empty() || outerSpatialLeaves(p.state.stage(*owner)).empty()))
      return {};
    bool perOutput = *owner == stage || fusibleConsumerOrBroadcast(p.state, stage) == *owner;

    GpuPartial n = p;
    size_t partsSplit = n.steps.size();
    auto parts = sketching::splitInto(n, stage, axis, std::make_shared<SplitStep>(stage, axis, std::vector<int64_t>{1}), 2);
    n.apply(std::make_shared<RfactorStep>(stage, parts[1]));
    std::string partial = n.state.stages()[size_t(n.state.stageIndex(stage) - 1)].name();
    n.apply(std::make_shared<CacheWriteStep>(partial, "local"));
    std::string partialLocal = n.state.stages()[size_t(n.state.stageIndex(partial) - 1)].name();
    n.apply(std::make_shared<CacheReadStep>(partial, "shared", std::vector<std::string>{stage}));
    std::string partialShared = n.state.stages()[size_t(n.state.stageIndex(partial) + 1)].name();
    n.apply(std::make_shared<ComputeInlineStep>(partial));
    if (!n.outputs.count(*owner)) bindCrossThreadOutput(n, *owner);
    const BoundOutput out = n.outputs.at(*owner);
    if (stage != *owner) {
      // Its readers must be in the output first (a reduction without this rule, left at the
      // root so far: softmax's sum, when the maximum it reads is shared across threads).
      placeRootReaders(n, stage);
      n.apply(std::make_shared<ComputeAtStep>(stage, *owner, perOutput ? out.thread : out.block));
    }
    // The block's partial sums, [part, outputs...]: a part per threadIdx.x, an output per threadIdx.y.
    n.apply(std::make_shared<ComputeAtStep>(partialShared, *owner, out.block));
    std::vector<std::string> loops = leafNames(n.state.stage(partialShared));
    n.apply(std::make_shared<AnnotateStep>(partialShared, loops[0], Annotation::ThreadX));
    std::string innermost = loops[0];
    if (loops.size() > 1) {
      innermost = fuse(n, partialShared, std::vector<std::string>(loops.begin() + 1, loops.end()));
      n.apply(std::make_shared<AnnotateStep>(partialShared, innermost, Annotation::ThreadY));
    }
    n.apply(std::make_shared<ComputeAtStep>(partialLocal, partialShared, innermost));
    n.crossThread.insert({stage, partialLocal});
    // A warp of parts at least where the axis has them (TVM binds a warp to the parts).
    n.bounds.push_back({"threads along x (parts of " + stage + ")", {{partsSplit, 0}}, limits_.maxBlockDimensions[0],
                        std::min(limits_.warpSize, longest)});
    n.bounds.push_back({"threads per block", {{partsSplit, 0}, {out.threadSplit, 0}}, limits_.maxThreadsPerBlock, 1});
    n.description.push_back(fmt::format("cross-thread reduction of {} in {}", stage, *owner));
    return {GpuOutcome::Apply, {next(std::move(n))}};
  }

  GpuRuleResult addCacheWrite(const GpuPartial& p, const std::string& stage) {
    if (p.cacheWritten.count(stage) || p.crossThread.count(stage) || !p.state.isOutput(stage) || !needsMultiLevelTiling(p.state, stage) ||
        fusibleConsumerOrBroadcast(p.state, stage))
      return {};
    GpuPartial n = p;
    n.apply(std::make_shared<CacheWriteStep>(stage, "local"));
    // The cache stage took this index; the rules visit it next, with the copy as its consumer.
    n.cacheWritten.insert(stage);
    n.cacheWritten.insert(n.stageName());
    n.description.push_back("cache write " + stage);
    return {GpuOutcome::ApplyAndSkipRest, {std::move(n)}};
  }

  GpuRuleResult tilingWithFusion(const GpuPartial& p, const std::string& stage) {
    if (p.crossThread.count(stage) || !needsMultiLevelTiling(p.state, stage)) return {};
    auto consumer = fusibleConsumerOrBroadcast(p.state, stage);
    if (!consumer || !p.state.isOutput(*consumer) || !p.state.stage(*consumer).relations.empty() || p.outputs.count(*consumer)) return {};
    GpuPartial n = p;
    auto tiled = sketching::tileStage(n, stage, structure_);
    if (tiled.spatialAxes.empty()) return {};  // no spatial axis to share
    auto followed = sketching::fuseIntoConsumer(n, stage, *consumer, tiled.spatialAxes, 3);
    std::vector<std::string> blockLoops = followed.untiled;
    blockLoops.insert(blockLoops.end(), followed.levels[0].begin(), followed.levels[0].end());
    bindTiledLevels(n, *consumer, blockLoops, followed.levels[1], followed.levels[2]);
    noteTiled(n, stage, tiled);
    n.description.push_back(fmt::format("tile {} ({}) in {} at its threads", stage, structure_.letters, *consumer));
    return {GpuOutcome::ApplyAndSkipRest, {next(std::move(n))}};
  }

  GpuRuleResult multiLevelTiling(const GpuPartial& p, const std::string& stage) {
    if (p.crossThread.count(stage) || !needsMultiLevelTiling(p.state, stage)) return {};
    GpuPartial n = p;
    std::vector<std::string> unit = sketching::rootAxes(n.state.stage(stage)).unitSpatial;
    auto tiled = sketching::tileStage(n, stage, structure_);
    // An output binds its own levels; another stage is placed in its readers' output later,
    // where its loops stay serial (one thread computes its tiles).
    if (n.state.isOutput(stage) && !tiled.spatialAxes.empty()) {
      std::vector<std::vector<std::string>> levels(3);
      for (size_t l = 0; l < 3; ++l)
        for (auto& axisLoops : tiled.spatialLoops) levels[l].push_back(axisLoops[l]);
      unit.insert(unit.end(), levels[0].begin(), levels[0].end());
      bindTiledLevels(n, stage, unit, levels[1], levels[2]);
      noteTiled(n, stage, tiled);
    }
    n.description.push_back(fmt::format("tile {} ({})", stage, structure_.letters));
    return {GpuOutcome::ApplyAndSkipRest, {next(std::move(n))}};
  }

  // ---- finishing rules ---------------------------------------------------------------------

  void finish(GpuPartial p) {
    for (const std::string& out : dag_.outputNames())
      if (!p.outputs.count(out)) bindPlainOutput(p, out);
    for (int i = int(p.state.stages().size()) - 1; i >= 0; --i) {
      const Stage& s = p.state.stages()[size_t(i)];
      if (s.isPlaceholder() || s.attach != AttachKind::Root || p.state.isOutput(s.name())) continue;
      std::string name = s.name();
      placeInOwner(p, name);
    }
    std::string description = p.describe();
    sketches_.push_back({std::move(p.steps), std::move(description), std::move(p.bounds)});
  }

  /// The spatial loops of an output fused and split into blockIdx.x and threadIdx.x.
  void bindPlainOutput(GpuPartial& p, const std::string& out) {
    std::vector<std::string> loops = outerSpatialLeaves(p.state.stage(out));
    TESSEL_CHECK(!loops.empty(), "GPU sketch: output '{}' has no spatial loop to bind to the GPU's blocks and threads", out);
    std::string all = fuse(p, out, loops);
    const Stage& o = p.state.stage(out);
    int64_t elements = o.iterator(o.leafByName(all)).extent;
    size_t split = p.steps.size();
    auto parts = sketching::splitInto(p, out, all, std::make_shared<SplitStep>(out, all, std::vector<int64_t>{1}), 2);
    p.apply(std::make_shared<AnnotateStep>(out, parts[0], Annotation::BlockX));
    p.apply(std::make_shared<AnnotateStep>(out, parts[1], Annotation::ThreadX));
    p.outputs[out] = {OutputLayout::Plain, parts[0], parts[1], split};
    // A warp at least where the output has that many elements (TVM binds a warp here).
    p.bounds.push_back({"threads per block of " + out, {{split, 0}}, std::min(limits_.maxThreadsPerBlock, limits_.maxBlockDimensions[0]),
                        std::min(limits_.warpSize, elements)});
    p.description.push_back(fmt::format("bind {} to blocks and threads", out));
  }

  /// A stage left at the root: computed in the output its readers end in, at the innermost of
  /// that output's loops holding all of them, no deeper than its thread loop.
  void placeInOwner(GpuPartial& p, const std::string& stage) {
    placeRootReaders(p, stage);
    auto owner = ownerOf(p.state, stage);
    TESSEL_CHECK(owner.has_value(),
                 "GPU sketch: stage '{}' is read by stages that end in different outputs; one kernel's thread cannot compute it "
                 "for all of them",
                 stage);
    const Stage& o = p.state.stage(*owner);
    int position = o.leafPosition(o.leafByName(p.outputs.at(*owner).thread));
    for (const std::string& reader : p.state.effectiveConsumers(stage)) {
      // The loop of the owner that the reader is computed at (the owner itself: its innermost).
      std::string walk = reader;
      while (walk != *owner && p.state.stage(walk).attach == AttachKind::At && p.state.stage(walk).attachStage != *owner)
        walk = p.state.stage(walk).attachStage;
      if (walk == *owner) continue;
      const Stage& w = p.state.stage(walk);
      TESSEL_CHECK(w.attach == AttachKind::At, "GPU sketch: stage '{}' is read by '{}', which is not computed in '{}'", stage, reader,
                   *owner);
      position = std::min(position, o.leafPosition(w.attachIterator));
    }
    std::string loop = o.iterator(o.leaves[size_t(position)]).name;
    p.apply(std::make_shared<ComputeAtStep>(stage, *owner, loop));
    p.description.push_back(fmt::format("compute {} at {}.{}", stage, *owner, loop));
  }

  /// The readers of a stage that are still at the root (and not outputs) placed in their output.
  void placeRootReaders(GpuPartial& p, const std::string& stage) {
    for (const std::string& reader : p.state.effectiveConsumers(stage))
      if (p.state.stage(reader).attach == AttachKind::Root && !p.state.isOutput(reader)) placeInOwner(p, reader);
  }

  // ---- helpers -----------------------------------------------------------------------------

  /// The output a stage's value ends in: itself, the output it (or the stage it is computed in)
  /// is computed in, or the one output all its readers end in; none when they end in several.
  static std::optional<std::string> ownerOf(const State& state, const std::string& stage) {
    if (state.isOutput(stage)) return stage;
    const Stage& s = state.stage(stage);
    if (s.attach == AttachKind::At) return ownerOf(state, s.attachStage);
    std::optional<std::string> owner;
    for (const std::string& reader : state.effectiveConsumers(stage)) {
      auto o = ownerOf(state, reader);
      if (!o || (owner && *o != *owner)) return std::nullopt;
      owner = o;
    }
    return owner;
  }

  /// Fuses `loops` (adjacent, in order) of a stage; returns the fused loop's name.
  static std::string fuse(PartialSketch& p, const std::string& stage, const std::vector<std::string>& loops) {
    if (loops.size() == 1) return loops.front();
    p.apply(std::make_shared<FuseStep>(stage, loops));
    const Stage& s = p.state.stage(stage);
    return s.iterator(s.relations.back().fused).name;
  }

  /// An output's levels fused and bound: blockIdx.x, vthread, threadIdx.x.
  void bindTiledLevels(GpuPartial& p, const std::string& out, const std::vector<std::string>& block,
                       const std::vector<std::string>& vthread, const std::vector<std::string>& threads) {
    std::string b = fuse(p, out, block), v = fuse(p, out, vthread), t = fuse(p, out, threads);
    p.apply(std::make_shared<AnnotateStep>(out, b, Annotation::BlockX));
    p.apply(std::make_shared<AnnotateStep>(out, v, Annotation::VThread));
    p.apply(std::make_shared<AnnotateStep>(out, t, Annotation::ThreadX));
    p.outputs[out] = {OutputLayout::Tiled, b, t, 0};
  }

  /// Blocks of T outputs (a hole) on blockIdx.x, the T outputs on threadIdx.y, threadIdx.x of
  /// extent 1 (only the first part's threads sum and store the outputs).
  void bindCrossThreadOutput(GpuPartial& p, const std::string& out) {
    std::string all = fuse(p, out, outerSpatialLeaves(p.state.stage(out)));
    size_t split = p.steps.size();
    auto blocks = sketching::splitInto(p, out, all, std::make_shared<SplitStep>(out, all, std::vector<int64_t>{1}), 2);
    auto lanes = sketching::splitInto(p, out, blocks[1], std::make_shared<SplitStep>(out, blocks[1], std::vector<int64_t>{}, 1), 2);
    p.apply(std::make_shared<AnnotateStep>(out, blocks[0], Annotation::BlockX));
    p.apply(std::make_shared<AnnotateStep>(out, lanes[0], Annotation::ThreadX));
    p.apply(std::make_shared<AnnotateStep>(out, lanes[1], Annotation::ThreadY));
    p.outputs[out] = {OutputLayout::CrossThread, blocks[0], lanes[1], split};
    p.bounds.push_back({"threads along y (outputs of a block of " + out + ")", {{split, 0}}, limits_.maxBlockDimensions[1], 1});
  }

  /// Records a stage tiled inside bound loops and the bounds of its thread and vthread levels.
  void noteTiled(GpuPartial& p, const std::string& stage, const sketching::TiledStage& tiled) {
    GpuTiledStage t;
    t.spatialAxes = tiled.spatialAxes;
    if (!tiled.reduceLoops.empty()) t.sharedAt = tiled.reduceLoops.back()[0];
    p.tiled[stage] = t;
    TileProductBound threads{"threads per block of " + stage, {}, std::min(limits_.maxThreadsPerBlock, limits_.maxBlockDimensions[0]), 1};
    TileProductBound vthreads{"virtual threads of " + stage, {}, limits_.maxVThreadExtent, 1};
    int64_t elements = 1;  // of the stage's tiled axes, as its operation defines them
    for (size_t k = 0; k < tiled.spatialSplitSteps.size(); ++k) {
      threads.factors.push_back({tiled.spatialSplitSteps[k], kThreadFactor});
      vthreads.factors.push_back({tiled.spatialSplitSteps[k], kVThreadFactor});
      for (const auto& axis : p.state.stage(stage).op->axes)
        if (axis.var.name() == tiled.spatialAxes[k]) elements *= axis.extent;
    }
    // TVM refuses a tiled block of fewer threads than a warp: its lanes would idle.
    threads.atLeast = std::min(limits_.warpSize, elements);
    p.bounds.push_back(std::move(threads));
    p.bounds.push_back(std::move(vthreads));
  }

  const te::ComputeDAG& dag_;
  passes::GpuLimits limits_;
  sketching::TileStructure structure_;
  std::vector<Sketch> sketches_;
};

}  // namespace

std::vector<Sketch> generateGpuSketches(const te::ComputeDAG& dag, const SketchOptions& options) {
  TESSEL_CHECK(options.gpu.has_value(), "GPU sketches need the device's limits");
  return GpuSketchGenerator(dag, options).run();
}

}  // namespace tessel::tune::ansor
