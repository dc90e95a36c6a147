/// Constant interval bounds of integer expressions, given intervals for their variables.
/// Used by the simplifier (to drop provably true guards and redundant min/max/mod) and by
/// lowering (buffer sizes). Unknown or unbounded parts give a full interval, never a wrong one.
#pragma once
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "ir/Expr.h"

namespace tessel::ir {

struct Interval {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t min = kNegInf;
  int64_t max = kPosInf;
  static Interval point(int64_t v) { return {v, v}; }
  static Interval everything() { return {}; }
  bool isPoint() const { return min == max; }
  bool boundedBelow() const { return min != kNegInf; }
  bool boundedAbove() const { return max != kPosInf; }
  bool bounded() const { return boundedBelow() && boundedAbove(); }
};

using VarBounds = std::unordered_map<const VarNode*, Interval>;

/// Bounds of an integer or bool expression (bool: 0 or 1); vectors bound all lanes.
Interval constBounds(const Expr& e, const VarBounds& bounds);

}  // namespace tessel::ir
