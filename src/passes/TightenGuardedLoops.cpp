// Guarded-loop tightening: a loop whose whole body is one guard linear in the loop's variable,
// directly or inside a perfect nest of loops (`for di in [0, 3): for c in [0, 32): if (di >= 1)
// ...`, left in the border pieces that loop partitioning does not split further), runs only
// over the values for which the guard can hold. The iterations
// dropped did nothing; no code is copied, so unlike partitioning this is free at any depth.
// Besides the wasted iterations, GCC 12 with AVX-512 miscompiled such a guarded loop of many
// scalar accumulators inside an outer loop it vectorized (if-conversion then loop
// vectorization); the regression test AnsorRegression.DepthwisePointwiseUnderAutoUnroll holds
// one.
#include <algorithm>

#include "ir/Bounds.h"
#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "passes/LinearGuard.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

class Tightener : public IRMutator {
 public:
  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    auto minC = asConstInt(n->min), extC = asConstInt(n->extent);
    Stmt loop = s;
    if (minC && extC && n->forKind != ForKind::Vectorized) {
      // Down a perfect nest (the guard of a loop's innermost statement, before hoisting, sits
      // inside loops that do not change it), with the inner loops' ranges.
      VarBounds inner = bounds;
      inner[n->var.node()] = Interval{*minC, *minC + *extC - 1};
      Stmt body = n->body;
      for (bool deeper = true; deeper && body.defined();) {
        deeper = false;
        if (body.kind() == StmtKind::Block && body.as<BlockNode>()->stmts.size() == 1) {
          body = body.as<BlockNode>()->stmts.front();
          deeper = true;
        } else if (auto f = body.as<ForNode>()) {
          auto minB = constBounds(f->min, inner), extB = constBounds(f->extent, inner);
          if (!minB.bounded() || !extB.bounded()) break;
          inner[f->var.node()] = Interval{minB.min, minB.max + extB.max - 1};
          body = f->body;
          deeper = true;
        }
      }
      if (auto guard = body.as<IfThenElseNode>(); guard && !guard->elseCase.defined()) {
        int64_t lo = *minC, hi = *minC + *extC - 1;
        narrow(guard->condition, n->var.node(), inner, lo, hi);
        if (lo > hi) return makeBlock({});  // the guard never holds: the loop does nothing
        if (lo != *minC || hi != *minC + *extC - 1) {
          VarBounds withLoop = bounds;
          withLoop[n->var.node()] = Interval{lo, hi};
          // The guard may now hold throughout (simplify then drops it).
          loop = makeFor(n->var, Expr(lo), Expr(hi - lo + 1), n->forKind, simplify(n->body, withLoop));
        }
      }
    }
    auto f = loop.as<ForNode>();
    auto minB = constBounds(f->min, bounds), extB = constBounds(f->extent, bounds);
    if (minB.bounded() && extB.bounded()) bounds[f->var.node()] = Interval{minB.min, minB.max + extB.max - 1};
    Stmt r = IRMutator::visitFor(loop, f);
    bounds.erase(f->var.node());
    return r;
  }

 private:
  /// Narrows [lo, hi] to the values of `var` for which `c` can hold for some value of the
  /// other variables (their bounds are `others`: the enclosing and the nested loops').
  void narrow(const Expr& c, const VarNode* var, const VarBounds& others, int64_t& lo, int64_t& hi) {
    if (c.kind() == ExprKind::And) {
      auto b = static_cast<const BinaryNode*>(c.get());
      narrow(b->a, var, others, lo, hi);
      narrow(b->b, var, others, lo, hi);
      return;
    }
    if (c.kind() != ExprKind::LT && c.kind() != ExprKind::LE && c.kind() != ExprKind::GE && c.kind() != ExprKind::GT) return;
    auto b = static_cast<const BinaryNode*>(c.get());
    if (b->a.type() != DataType::int64()) return;
    if (auto guard = solveGuard(c.kind(), linearSum(simplify(b->a - b->b)), var, others)) narrowToSome(*guard, lo, hi);
  }

  VarBounds bounds;
};

}  // namespace

Stmt tightenGuardedLoops(const Stmt& s) { return Tightener().mutate(s); }

}  // namespace tessel::passes
