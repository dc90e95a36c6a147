#include "passes/LinearGuard.h"

#include <algorithm>

#include "ir/Mutator.h"

namespace tessel::passes {

using namespace ir;

namespace {

int64_t saturate(__int128 v) {
  if (v <= Interval::kNegInf) return Interval::kNegInf;
  if (v >= Interval::kPosInf) return Interval::kPosInf;
  return int64_t(v);
}

/// coefficient * [b.min, b.max], saturating; unbounded ends stay unbounded.
Interval scaled(Interval b, int64_t coefficient) {
  auto end = [&](int64_t x) -> __int128 {
    if (x == Interval::kNegInf || x == Interval::kPosInf)
      return ((x > 0) == (coefficient > 0)) ? __int128(Interval::kPosInf) : __int128(Interval::kNegInf);
    return __int128(x) * coefficient;
  };
  __int128 a = end(b.min), c = end(b.max);
  return {saturate(std::min(a, c)), saturate(std::max(a, c))};
}

Interval plus(Interval a, Interval b) {
  auto add = [](int64_t x, int64_t y, int64_t infinity) {
    if (x == infinity || y == infinity) return infinity;
    return saturate(__int128(x) + y);
  };
  return {add(a.min, b.min, Interval::kNegInf), add(a.max, b.max, Interval::kPosInf)};
}

/// coef * v >= limit (atLeast) or coef * v <= limit, applied to [lo, hi]. Limits far beyond any
/// loop's range are an overflow risk, not a bound worth having: false.
bool applyLimit(int64_t coef, __int128 limit, bool atLeast, int64_t& lo, int64_t& hi) {
  constexpr __int128 kLimit = __int128(1) << 62;
  if (limit < -kLimit || limit > kLimit) return false;
  int64_t l = int64_t(limit);
  if (atLeast == (coef > 0)) lo = std::max(lo, ceilDiv(l, coef));
  else hi = std::min(hi, floorDiv(l, coef));
  return true;
}

}  // namespace

std::optional<GuardOnVariable> solveGuard(ExprKind k, const LinearSum& difference, const VarNode* var, const VarBounds& others) {
  if (k != ExprKind::LT && k != ExprKind::LE && k != ExprKind::GE && k != ExprKind::GT) return std::nullopt;
  GuardOnVariable g;
  g.rest = Interval::point(difference.constant);
  for (const auto& [atom, coefficient] : difference.terms) {
    if (atom.as<VarNode>() == var) {
      g.coef = coefficient;
      continue;
    }
    if (usesVar(atom, var)) return std::nullopt;  // var inside a division, a product...
    g.rest = plus(g.rest, scaled(constBounds(atom, others), coefficient));
  }
  if (g.coef == 0) return std::nullopt;
  g.atLeast = k == ExprKind::GE || k == ExprKind::GT;
  g.bias = (k == ExprKind::LE || k == ExprKind::GT) ? 1 : 0;
  return g;
}

bool narrowToSome(const GuardOnVariable& g, int64_t& lo, int64_t& hi) {
  if (g.atLeast) {
    // coef * v + rest >= bias for some rest: coef * v >= bias - rest.max
    if (!g.rest.boundedAbove()) return false;
    return applyLimit(g.coef, __int128(g.bias) - g.rest.max, true, lo, hi);
  }
  // coef * v + rest < bias for some rest: coef * v <= bias - 1 - rest.min
  if (!g.rest.boundedBelow()) return false;
  return applyLimit(g.coef, __int128(g.bias) - 1 - g.rest.min, false, lo, hi);
}

bool narrowToAll(const GuardOnVariable& g, int64_t& lo, int64_t& hi) {
  if (g.atLeast) {
    // coef * v + rest >= bias for every rest: coef * v >= bias - rest.min
    if (!g.rest.boundedBelow()) return false;
    return applyLimit(g.coef, __int128(g.bias) - g.rest.min, true, lo, hi);
  }
  // coef * v + rest < bias for every rest: coef * v <= bias - 1 - rest.max
  if (!g.rest.boundedAbove()) return false;
  return applyLimit(g.coef, __int128(g.bias) - 1 - g.rest.max, false, lo, hi);
}

}  // namespace tessel::passes
