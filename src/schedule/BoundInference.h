/// Bound inference: which region of each stage's tensor must be computed at its attach
/// point. Consumers are resolved first; a producer attached inside a consumer's loop nest
/// computes the union of what the consumer reads with the outer loops fixed and the inner
/// loops relaxed over their ranges (every stride-th index where all those reads step by a
/// multiple, for a stage outside shared memory). Also gives, per stage, the loop variable of every leaf
/// iterator and the value of every root axis in terms of them — what lowering emits.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/Bounds.h"
#include "ir/Expr.h"

namespace tessel::schedule {

class State;
struct Stage;

struct StageBounds {
  std::vector<ir::Expr> regionMin;     ///< per root axis (op axes, then reduce axes)
  std::vector<int64_t> regionExtent;   ///< per root axis
  std::vector<bool> regionExact;       ///< false: extent is an upper bound, loops are guarded
  /// Per root axis: the region holds every stride-th index from regionMin on, regionExtent of
  /// them (1: all). A stage in registers whose consumer's loops under the attach point step
  /// through its axis by a multiple (a warp's lanes interleaved with each lane's sub-tile: rows
  /// g, g + 8, ...) keeps only the indices it holds, not the window around them.
  std::vector<int64_t> regionStride;
  std::vector<ir::Var> iteratorVars;   ///< per iterator id (meaningful for leaves)
  std::vector<ir::Expr> rootValues;    ///< per root axis: regionMin + regionStride * f(leaf vars)
  ir::Expr body;                       ///< the op's body with inlined producers substituted
};

struct BoundsResult {
  std::map<std::string, StageBounds> stages;
  ir::VarBounds varRanges;  ///< every leaf variable: [0, extent - 1]
};

enum class BoundsDetail {
  Full,     ///< everything lowering needs
  Extents,  ///< the iterator extents alone (root values only where a region depends on them)
};

/// Infers regions and sets the iterator extents of `state` accordingly.
BoundsResult inferBounds(State& state, BoundsDetail detail = BoundsDetail::Full);

/// What inferBounds assigns to a stage that covers its whole shape (one not computed inside
/// another): root extents from the shape and reduction, leaf extents through the relations.
void assignWholeShapeExtents(Stage& stage);

/// A stage's body with the bodies of the inlined stages it reads substituted (as lowering sees
/// it); needs no bounds.
ir::Expr inlinedBody(const State& state, const std::string& stageName);

/// Root-axis values of a stage in terms of its iterator variables (without region mins).
std::vector<ir::Expr> rootAxisValues(const Stage& stage, const std::vector<ir::Var>& iteratorVars);
/// The value of every iterator of a stage (by id: roots, split and fused ones, leaves) in terms
/// of the leaf variables, relative to the region like rootAxisValues.
std::vector<ir::Expr> iteratorValues(const Stage& stage, const std::vector<ir::Var>& iteratorVars);

}  // namespace tessel::schedule
