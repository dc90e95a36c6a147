// Loop partitioning: a loop whose body is guarded by conditions linear in its variable
// (non-divisible splits leave `o * f + i < N`) splits into the range where every guard
// holds for all inner iterations — the simplifier then drops the guards there — and the
// boundary ranges, which keep them.
#include <map>
#include <optional>

#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// The coefficient of `var` if e = coef * var + rest with rest free of var.
std::optional<std::pair<int64_t, Expr>> linearIn(const Expr& e, const VarNode* var) {
  Expr atZero = simplify(substitute(e, {{var, Expr(int64_t(0))}}));
  Expr atOne = simplify(substitute(e, {{var, Expr(int64_t(1))}}));
  Expr slope = simplify(atOne - atZero);  // kept alive: asConstInt points into it
  auto coef = asConstInt(slope);
  if (!coef) return std::nullopt;
  // Check linearity at another point: f(2) - f(0) == 2 * coef.
  Expr atTwo = simplify(substitute(e, {{var, Expr(int64_t(2))}}));
  Expr doubleSlope = simplify(atTwo - atZero);
  auto twice = asConstInt(doubleSlope);
  if (!twice || *twice != 2 * *coef) return std::nullopt;
  if (usesVar(atZero, var)) return std::nullopt;
  return std::make_pair(*coef, atZero);
}

/// A copy of a statement whose allocations are fresh buffers. The pieces of a partitioned loop
/// must not share one: a piece of one iteration loses its loop, and code generation would
/// then declare the same buffer twice in one scope.
class FreshAllocations : public IRMutator {
 public:
  Stmt visitAllocate(const Stmt&, const AllocateNode* n) override {
    Buffer copy = std::make_shared<BufferNode>(*n->buffer);
    fresh[n->buffer.get()] = copy;
    return makeAllocate(copy, mutate(n->body));
  }
  Expr visitLoad(const Expr& e, const LoadNode* n) override {
    auto it = fresh.find(n->buffer.get());
    return it == fresh.end() ? IRMutator::visitLoad(e, n) : load(it->second, mutate(n->index));
  }
  Stmt visitStore(const Stmt& s, const StoreNode* n) override {
    auto it = fresh.find(n->buffer.get());
    return it == fresh.end() ? IRMutator::visitStore(s, n) : makeStore(it->second, mutate(n->index), mutate(n->value));
  }

 private:
  std::map<const BufferNode*, Buffer> fresh;
};

struct SafeRange {
  int64_t lo, hi;  // inclusive
};

class Partitioner : public IRMutator {
 public:
  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    auto minC = asConstInt(n->min), extC = asConstInt(n->extent);
    if (!minC || !extC || n->forKind == ForKind::Vectorized || *extC < 2) return descend(s, n);
    int64_t lo = *minC, hi = *minC + *extC - 1;
    SafeRange safe{lo, hi};
    bool any = false;
    VarBounds inner = bounds;
    collect(n->body, n->var.node(), inner, safe, any);
    if (!any || safe.lo > safe.hi || (safe.lo <= lo && safe.hi >= hi)) return descend(s, n);
    safe.lo = std::max(safe.lo, lo);
    safe.hi = std::min(safe.hi, hi);
    std::vector<Stmt> parts;
    auto piece = [&](int64_t a, int64_t b, bool main) {
      if (a > b) return;
      Stmt body = parts.empty() ? n->body : FreshAllocations().mutate(n->body);
      Stmt loop = makeFor(n->var, Expr(a), Expr(b - a + 1), n->forKind, body);
      bounds[n->var.node()] = Interval{a, b};
      loop = simplify(loop, bounds);
      parts.push_back(main ? mutate(loop) : loop);
      bounds.erase(n->var.node());
    };
    piece(lo, safe.lo - 1, false);
    piece(safe.lo, safe.hi, true);
    piece(safe.hi + 1, hi, false);
    return makeBlock(parts);
  }

 private:
  Stmt descend(const Stmt& s, const ForNode* n) {
    auto minB = constBounds(n->min, bounds), extB = constBounds(n->extent, bounds);
    if (minB.bounded() && extB.bounded()) bounds[n->var.node()] = Interval{minB.min, minB.max + extB.max - 1};
    Stmt r = IRMutator::visitFor(s, n);
    bounds.erase(n->var.node());
    return r;
  }

  /// Narrows `safe` to where every guard inside `s` that depends on `var` holds.
  void collect(const Stmt& s, const VarNode* var, VarBounds& inner, SafeRange& safe, bool& any) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::For: {
        auto f = s.as<ForNode>();
        auto minB = constBounds(f->min, inner), extB = constBounds(f->extent, inner);
        if (!minB.bounded() || !extB.bounded()) return;
        inner[f->var.node()] = Interval{minB.min, minB.max + extB.max - 1};
        collect(f->body, var, inner, safe, any);
        return;
      }
      case StmtKind::Block:
        for (auto& x : s.as<BlockNode>()->stmts) collect(x, var, inner, safe, any);
        return;
      case StmtKind::Allocate: collect(s.as<AllocateNode>()->body, var, inner, safe, any); return;
      case StmtKind::Pragma: collect(s.as<PragmaNode>()->body, var, inner, safe, any); return;
      case StmtKind::IfThenElse: {
        auto i = s.as<IfThenElseNode>();
        if (!i->elseCase.defined()) constrain(i->condition, var, inner, safe, any);
        collect(i->thenCase, var, inner, safe, any);
        return;
      }
      case StmtKind::Store: return;
    }
  }

  void constrain(const Expr& c, const VarNode* var, const VarBounds& inner, SafeRange& safe, bool& any) {
    if (c.kind() == ExprKind::And) {
      auto b = static_cast<const BinaryNode*>(c.get());
      constrain(b->a, var, inner, safe, any);
      constrain(b->b, var, inner, safe, any);
      return;
    }
    if (!usesVar(c, var)) return;
    ExprKind k = c.kind();
    if (k != ExprKind::LT && k != ExprKind::LE && k != ExprKind::GE && k != ExprKind::GT) return;
    auto b = static_cast<const BinaryNode*>(c.get());
    if (b->a.type() != DataType::int64()) return;
    // Normalize to d >= 0 (GE/GT) or d < 0 (LT/LE) with d = a - b.
    auto lin = linearIn(simplify(b->a - b->b), var);
    if (!lin || lin->first == 0) return;
    auto [coef, rest] = *lin;
    auto rb = constBounds(rest, inner);
    int64_t bias = (k == ExprKind::LE || k == ExprKind::GT) ? 1 : 0;  // a <= b  <=>  a - b < 1
    if (k == ExprKind::LT || k == ExprKind::LE) {
      // coef * v + rest < bias for every rest: coef * v < bias - rest.max
      if (!rb.boundedAbove()) return;
      int64_t limit = bias - rb.max;  // coef * v < limit, i.e. coef * v <= limit - 1
      if (coef > 0) safe.hi = std::min(safe.hi, floorDiv(limit - 1, coef));
      else safe.lo = std::max(safe.lo, ceilDiv(limit - 1, coef));
    } else {
      // coef * v + rest >= bias for every rest: coef * v >= bias - rest.min
      if (!rb.boundedBelow()) return;
      int64_t limit = bias - rb.min;
      if (coef > 0) safe.lo = std::max(safe.lo, ceilDiv(limit, coef));
      else safe.hi = std::min(safe.hi, floorDiv(limit, coef));
    }
    any = true;
  }

  VarBounds bounds;
};

}  // namespace

Stmt partitionLoops(const Stmt& s) { return Partitioner().mutate(s); }

}  // namespace tessel::passes
