#include "tune/ansor/SketchBuilding.h"

#include <algorithm>

#include "support/Error.h"

namespace tessel::tune::ansor::sketching {

using namespace schedule;

void PartialSketch::apply(StepPtr step) {
  step->apply(state);
  steps.push_back(std::move(step));
}

std::string PartialSketch::describe() const {
  std::string text;
  for (auto& d : description) text += (text.empty() ? "" : "; ") + d;
  return text.empty() ? "no change" : text;
}

std::vector<std::string> splitInto(PartialSketch& p, const std::string& stage, const std::string& iterator, StepPtr step, size_t levels) {
  int position = p.state.stage(stage).leafPosition(p.state.stage(stage).leafByName(iterator));
  p.apply(std::move(step));
  const Stage& s = p.state.stage(stage);
  std::vector<std::string> names;
  for (size_t l = 0; l < levels; ++l) names.push_back(s.iterator(s.leaves[size_t(position) + l]).name);
  return names;
}

StepPtr holeSplit(const std::string& stage, const std::string& axis, size_t levels) {
  return std::make_shared<SplitStep>(stage, axis, std::vector<int64_t>(levels - 1, 1));
}

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

TileStructure::TileStructure(const std::string& text) : letters(text) {
  for (char c : text) TESSEL_CHECK(c == 'S' || c == 'R', "tile structure '{}': only S (spatial) and R (reduce) levels exist", text);
  spatialLevels = size_t(std::count(text.begin(), text.end(), 'S'));
  reduceLevels = text.size() - spatialLevels;
  TESSEL_CHECK(spatialLevels >= 1 && reduceLevels >= 1, "tile structure '{}' needs an S and an R level", text);
}

TiledStage tileStage(PartialSketch& p, const std::string& stage, const TileStructure& structure) {
  RootAxes axes = rootAxes(p.state.stage(stage));
  TiledStage tiled;
  tiled.spatialAxes = axes.spatial;
  for (auto& a : axes.spatial) {
    if (structure.spatialLevels == 1) {
      tiled.spatialLoops.push_back({a});
      continue;
    }
    tiled.spatialSplitSteps.push_back(p.steps.size());
    tiled.spatialLoops.push_back(splitInto(p, stage, a, holeSplit(stage, a, structure.spatialLevels), structure.spatialLevels));
  }
  for (auto& a : axes.reduce)
    tiled.reduceLoops.push_back(structure.reduceLevels == 1
                                    ? std::vector<std::string>{a}
                                    : splitInto(p, stage, a, holeSplit(stage, a, structure.reduceLevels), structure.reduceLevels));
  std::vector<std::string> order = axes.unitSpatial;
  size_t s = 0, r = 0;
  for (char level : structure.letters) {
    // Unit reduce loops go just before the first reduce level: outside it they would end the
    // run of outer spatial loops that parallelization (or thread binding) fuses.
    if (level == 'R' && r == 0) order.insert(order.end(), axes.unitReduce.begin(), axes.unitReduce.end());
    auto& loops = level == 'S' ? tiled.spatialLoops : tiled.reduceLoops;
    size_t l = level == 'S' ? s++ : r++;
    for (auto& axisLoops : loops) order.push_back(axisLoops[l]);
  }
  if (order.size() >= 2) p.apply(std::make_shared<ReorderStep>(stage, order));
  return tiled;
}

FollowedLoops fuseIntoConsumer(PartialSketch& p, const std::string& producer, const std::string& consumer,
                               const std::vector<std::string>& tiledAxes, int level) {
  const Stage& ps = p.state.stage(producer);
  const Stage& cs = p.state.stage(consumer);
  std::vector<std::pair<std::string, std::string>> pairs;  // producer axis, consumer axis
  FollowedLoops followed;
  for (size_t d = 0; d < ps.op->axes.size(); ++d) {
    const std::string& name = ps.iterator(int(d)).name;
    if (std::find(tiledAxes.begin(), tiledAxes.end(), name) != tiledAxes.end()) pairs.emplace_back(name, cs.iterator(int(d)).name);
    else followed.untiled.push_back(cs.iterator(int(d)).name);
  }
  std::vector<std::vector<std::string>> loops;
  for (auto& [source, axis] : pairs)
    loops.push_back(splitInto(p, consumer, axis, std::make_shared<FollowSplitStep>(consumer, axis, producer, source, level + 1),
                              size_t(level) + 1));
  std::vector<std::string> order = followed.untiled;
  followed.levels.resize(size_t(level) + 1);
  for (size_t l = 0; l <= size_t(level); ++l)
    for (auto& axisLoops : loops) {
      order.push_back(axisLoops[l]);
      followed.levels[l].push_back(axisLoops[l]);
    }
  if (order.size() >= 2) p.apply(std::make_shared<ReorderStep>(consumer, order));
  p.apply(std::make_shared<ComputeAtStep>(producer, consumer, loops.back()[size_t(level) - 1]));
  return followed;
}

}  // namespace tessel::tune::ansor::sketching
