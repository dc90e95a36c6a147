/// What the CPU and the GPU sketch rules (Sketches.cpp, GpuSketches.cpp) build sketches with: a
/// sketch in the making (its steps, the state they give and the stage the rules look at next),
/// the multi-level tiling of a stage by a tile structure ("SSRSRS", "SSSRRSRS"), and a
/// consumer's loops split to follow a tiled producer's outer levels with the producer computed
/// inside them. Tile sizes are holes: splits with placeholder factors of 1.
#pragma once
#include <string>
#include <vector>

#include "schedule/State.h"
#include "schedule/Steps.h"

namespace tessel::tune::ansor::sketching {

/// A sketch being made.
struct PartialSketch {
  std::vector<schedule::StepPtr> steps;
  schedule::State state;
  int stage = 0;  ///< the stage the rules look at next: an index into the state's stages, counting down
  std::vector<std::string> description;  ///< one phrase per rule applied

  void apply(schedule::StepPtr step);
  const std::string& stageName() const { return state.stages()[size_t(stage)].name(); }
  /// The phrases joined, or "no change".
  std::string describe() const;
};

/// Splits `iterator` of `stage` with `step`, which makes `levels` loops in its place; returns
/// their names, outermost first.
std::vector<std::string> splitInto(PartialSketch& p, const std::string& stage, const std::string& iterator, schedule::StepPtr step,
                                   size_t levels);

/// A split of `axis` into `levels` loops whose factors are holes (placeholders of 1).
schedule::StepPtr holeSplit(const std::string& stage, const std::string& axis, size_t levels);

/// A stage's root axes as the sketch rules treat them: the axes of extent 1 are left whole
/// (outermost), the others are tiled.
struct RootAxes {
  std::vector<std::string> unitSpatial, unitReduce, spatial, reduce;
};
RootAxes rootAxes(const schedule::Stage& s);

/// One letter per tile level, outermost first: S spatial, R reduce. Error naming the text
/// unless it has only those letters and at least one of each.
struct TileStructure {
  std::string letters;
  size_t spatialLevels = 0, reduceLevels = 0;
  explicit TileStructure(const std::string& text);
};

/// The loops a multi-level tiling made.
struct TiledStage {
  std::vector<std::string> spatialAxes;                             ///< the tiled spatial root axes (not those of extent 1)
  std::vector<std::vector<std::string>> spatialLoops, reduceLoops;  ///< per tiled axis, its loops, outermost level first
  std::vector<size_t> spatialSplitSteps;                            ///< per tiled spatial axis, its split's index in the steps
};

/// Splits every non-unit axis of the stage into its levels of the structure and orders the loops
/// level by level (unit axes outermost, unit reduce axes just before the first reduce level).
TiledStage tileStage(PartialSketch& p, const std::string& stage, const TileStructure& structure);

/// A consumer's loops after following a producer's tiles: its untiled axes (outermost), then per
/// level (0 .. level, the last one holding the rest) one loop per tiled axis.
struct FollowedLoops {
  std::vector<std::string> untiled;
  std::vector<std::vector<std::string>> levels;
};

/// Splits the consumer's axes like the producer's outer `level` tile levels (the innermost of
/// its level + 1 loops covers the rest), orders them level by level and computes the producer
/// inside the last loop of level `level` - 1. The consumer reads the producer at its own axes,
/// in order: axis d matches axis d.
FollowedLoops fuseIntoConsumer(PartialSketch& p, const std::string& producer, const std::string& consumer,
                               const std::vector<std::string>& tiledAxes, int level);

}  // namespace tessel::tune::ansor::sketching
