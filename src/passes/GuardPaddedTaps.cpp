// Padded taps skipped: a reduction update that adds a read of a zero-padded input,
//   acc = acc + (inside ? x : 0) * w     (or acc + (inside ? x : 0)),
// becomes `if (inside) acc = acc + x * w`. Loop partitioning then splits the kernel-window
// loops at the image border, so that interior taps run without any test and the taps that
// fall on the padding are not computed at all — as oneDNN's direct convolutions do. On a 7x7
// image a 3x3 window has 18% of its taps on the padding, on 14x14 9%.
//
// Adding 0 * w leaves the accumulator unchanged unless w is infinite or NaN, so skipping the
// update changes no finite result. Only a condition on a serial loop (a kernel row or column
// loop, which partitioning can split) is turned into a guard. Others stay selects: one that
// differs between the lanes of a vectorized loop (a guard would keep the loop scalar), and
// one on unrolled and parallel loops only (a fully unrolled depthwise window: branches
// around its straight-line updates made GCC keep the accumulators in memory, 30% slower).
#include <optional>
#include <unordered_set>

#include "ir/Equality.h"
#include "ir/Mutator.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

bool isZero(const Expr& e) {
  if (auto c = e.as<CastNode>()) return isZero(c->value);
  if (auto f = e.as<FloatImmNode>()) return f->value == 0.0;
  if (auto i = e.as<IntImmNode>()) return i->value == 0;
  return false;
}

/// `term` with its one padded read (a select or if_then_else whose other value is zero)
/// replaced by the read itself; the read's condition goes to `condition`.
std::optional<Expr> withoutPadding(const Expr& term, Expr& condition) {
  switch (term.kind()) {
    case ExprKind::Select:
    case ExprKind::IfThenElse: {
      auto s = static_cast<const SelectNode*>(term.get());
      if (!isZero(s->falseValue) || s->trueValue.type() != term.type()) return std::nullopt;
      condition = s->condition;
      return s->trueValue;
    }
    case ExprKind::Cast: {
      auto c = term.as<CastNode>();
      auto inner = withoutPadding(c->value, condition);
      if (!inner) return std::nullopt;
      return cast(term.type(), *inner);
    }
    case ExprKind::Mul: {
      auto m = static_cast<const BinaryNode*>(term.get());
      if (auto a = withoutPadding(m->a, condition)) return binary(ExprKind::Mul, *a, m->b);
      if (auto b = withoutPadding(m->b, condition)) return binary(ExprKind::Mul, m->a, *b);
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

class PaddedTapGuard : public IRMutator {
 public:
  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    // Unrolled and parallel loops are tracked by neither set: their variables alone do not make
    // a condition worth a guard.
    std::unordered_set<const VarNode*>* vars = n->forKind == ForKind::Vectorized ? &vectorVars
                                               : n->forKind == ForKind::Serial   ? &serialVars
                                                                                 : nullptr;
    if (vars) vars->insert(n->var.node());
    Stmt r = IRMutator::visitFor(s, n);
    if (vars) vars->erase(n->var.node());
    return r;
  }

  Stmt visitStore(const Stmt& s, const StoreNode* n) override {
    if (n->value.kind() != ExprKind::Add) return s;
    auto add = static_cast<const BinaryNode*>(n->value.get());
    for (bool accumulatorFirst : {true, false}) {
      const Expr& accumulator = accumulatorFirst ? add->a : add->b;
      const Expr& term = accumulatorFirst ? add->b : add->a;
      auto load = accumulator.as<LoadNode>();
      if (!load || load->buffer != n->buffer || !structurallyEqual(load->index, n->index)) continue;
      Expr condition;
      auto unpadded = withoutPadding(term, condition);
      if (!unpadded || usesAny(condition, vectorVars) || !usesAny(condition, serialVars)) continue;
      return makeIf(condition, makeStore(n->buffer, n->index, binary(ExprKind::Add, accumulator, *unpadded)));
    }
    return s;
  }

 private:
  static bool usesAny(const Expr& condition, const std::unordered_set<const VarNode*>& vars) {
    for (const VarNode* v : vars)
      if (usesVar(condition, v)) return true;
    return false;
  }

  std::unordered_set<const VarNode*> vectorVars, serialVars;
};

}  // namespace

Stmt guardPaddedTaps(const Stmt& s) { return PaddedTapGuard().mutate(s); }

}  // namespace tessel::passes
