/// The arithmetic simplifier. Index arithmetic (int64) is brought to a canonical linear form
/// (like terms collected, constants folded), floor division and modulo by constants are
/// resolved where bounds allow, and min/max/comparisons that bounds decide are replaced by
/// their result. Statements: loop bounds feed the analysis, guards proven true disappear,
/// loops of one iteration are removed. Data arithmetic gets constant folding only.
#pragma once
#include "ir/Bounds.h"
#include "ir/Stmt.h"

namespace tessel::ir {

Expr simplify(const Expr& e, const VarBounds& bounds = {});
Stmt simplify(const Stmt& s, const VarBounds& bounds = {});
/// True if the bool expression holds for every value the bounds allow.
bool proveTrue(const Expr& condition, const VarBounds& bounds = {});

/// An int64 expression as sum(coefficient * atom) + constant, as the simplifier sees it: sums,
/// differences and products by literal constants taken apart, like terms collected (in order
/// of first appearance) and cancelled ones dropped. Atoms are what remains: variables,
/// divisions, products of two non-constants. Linear in the size of `e` (not simplified here).
struct LinearSum {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
};
LinearSum linearSum(const Expr& e);
/// The largest number that provably divides the int64 expression `e` whatever its atoms' values:
/// the gcd of its linear sum's coefficients and constant (0 when `e` is 0; 1 when nothing is
/// known). An access at `e` of L elements starts at a multiple of L when L divides it.
int64_t knownDivisor(const Expr& e);

}  // namespace tessel::ir
