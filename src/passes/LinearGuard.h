/// A loop guard `a OP b` (OP one of <, <=, >=, >, over int64 indices) solved for one loop
/// variable v: with d = a - b = coef * v + rest in linear form (ir::linearSum) and the other
/// variables' bounds, the guard reads `coef * v + rest >= bias` or `coef * v + rest < bias`,
/// rest in an interval. Two passes ask it two questions: where the guard holds for some value
/// of the rest (TightenGuardedLoops: the iterations that can do anything) and where it holds
/// for every value (LoopPartition: the iterations that need no guard).
#pragma once
#include <cstdint>
#include <optional>

#include "ir/Bounds.h"
#include "ir/Simplify.h"

namespace tessel::passes {

struct GuardOnVariable {
  int64_t coef = 0;         ///< never 0
  ir::Interval rest;        ///< bounds of d's other terms and constant (ends may be unbounded)
  bool atLeast = false;     ///< `coef * v + rest >= bias` (else `< bias`)
  int64_t bias = 0;         ///< 0 or 1: a <= b is d < 1, a > b is d >= 1
};

/// The guard solved for `var`, given the comparison's kind and d's linear form; nothing when
/// it is not a comparison, v does not appear, or v appears inside another term (a product, a
/// division) so that it is not linear in v.
std::optional<GuardOnVariable> solveGuard(ir::ExprKind comparison, const ir::LinearSum& difference, const ir::VarNode* var,
                                          const ir::VarBounds& others);

/// Narrows [lo, hi] to the values of v for which the guard holds for some value of the rest.
/// False (nothing narrowed) when the rest's needed end is unbounded or out of range.
bool narrowToSome(const GuardOnVariable& guard, int64_t& lo, int64_t& hi);

/// Narrows [lo, hi] to the values of v for which the guard holds for every value of the rest.
/// False (nothing narrowed) when the rest's needed end is unbounded or out of range.
bool narrowToAll(const GuardOnVariable& guard, int64_t& lo, int64_t& hi);

/// Integer division rounding towards minus and plus infinity (C++'s `/` rounds towards zero).
inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

}  // namespace tessel::passes
