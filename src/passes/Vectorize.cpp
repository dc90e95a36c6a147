// Vectorization: a loop of constant extent L annotated `vectorize` becomes one iteration of
// L-lane vector code. When L is not a power of two (GCC vector types need one) or the body
// holds something that cannot run lane-parallel (a local allocation, a guard that differs per
// lane, a store whose address is the same for all lanes while the value differs), the loop
// stays scalar: correctness first.
#include <algorithm>

#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

struct CannotVectorize {};

class Widen : public IRMutator {
 public:
  Widen(const VarNode* v, Expr r) : var(v), rampValue(std::move(r)) {}

  Expr visitVar(const Expr& e, const VarNode* v) override { return v == var ? rampValue : e; }

  Expr visitLoad(const Expr& e, const LoadNode* n) override {
    Expr i = mutate(n->index);
    return i.sameAs(n->index) ? e : load(n->buffer, i);
  }

  Stmt visitStore(const Stmt& s, const StoreNode* n) override {
    Expr i = mutate(n->index), v = mutate(n->value);
    if (i.type().isScalar() && v.type().isVector()) throw CannotVectorize{};
    // A lane-invariant accumulation would run once instead of once per lane.
    if (i.type().isScalar() && readsBuffer(v, n->buffer.get())) throw CannotVectorize{};
    if (i.type().isVector() && v.type().isScalar()) v = broadcast(v, i.type().lanes);
    if (i.sameAs(n->index) && v.sameAs(n->value)) return s;
    return makeStore(n->buffer, i, v);
  }

  Stmt visitIf(const Stmt& s, const IfThenElseNode* n) override {
    Expr c = mutate(n->condition);
    // A guard that is the same for every lane (a copy's row bound, where the lanes run along
    // one row: floordiv(4 x + lane, 64) is floordiv(4 x, 64)) stays one scalar test.
    if (c.type().isVector()) {
      c = simplify(c);
      auto same = c.as<BroadcastNode>();
      if (!same) throw CannotVectorize{};
      c = same->value;
    }
    Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
    if (c.sameAs(n->condition) && t.sameAs(n->thenCase) && e.sameAs(n->elseCase)) return s;
    return makeIf(c, t, e);
  }

  Stmt visitFor(const Stmt&, const ForNode* n) override {
    Expr m = mutate(n->min), e = mutate(n->extent);
    if (m.type().isVector() || e.type().isVector()) throw CannotVectorize{};
    Stmt b = mutate(n->body);
    ForKind kind = n->forKind == ForKind::Parallel ? ForKind::Serial : n->forKind;
    return makeFor(n->var, m, e, kind, b);
  }

  Stmt visitAllocate(const Stmt&, const AllocateNode*) override { throw CannotVectorize{}; }

  const VarNode* var;
  Expr rampValue;
};

/// True if the statement already holds vector code (a vectorized loop nested inside).
bool hasVectorCode(const Stmt& s) {
  struct V : IRVisitor {
    bool found = false;
    void visit(const Expr& e) override {
      if (e.defined() && e.type().isVector()) found = true;
      else IRVisitor::visit(e);
    }
    void visit(const Stmt& x) override {
      if (auto f = x.as<ForNode>(); f && f->forKind == ForKind::Vectorized) found = true;
      if (!found) IRVisitor::visit(x);
    }
  } v;
  v.visit(s);
  return v.found;
}

/// True if `e` is a dense ramp (consecutive elements) once simplified.
bool isDenseRamp(const Expr& e) {
  auto r = e.as<RampNode>();
  if (!r) return false;
  auto stride = asConstInt(r->stride);
  return stride && *stride == 1;
}

/// True if every statement of `s` copies consecutive elements to consecutive elements: a store
/// of a dense ramp whose value is a load of a dense ramp or one value broadcast, of 32-bit
/// elements and at most 4 lanes (CUDA's widest access is 16 bytes: float4, int4), each under
/// a guard of all lanes or none.
bool isDenseCopy(const Stmt& s) {
  if (auto b = s.as<BlockNode>()) return std::all_of(b->stmts.begin(), b->stmts.end(), isDenseCopy);
  // A guarded copy: the guard is one scalar test for all lanes (Widen made it so).
  if (auto i = s.as<IfThenElseNode>()) return i->condition.type().isScalar() && !i->elseCase.defined() && isDenseCopy(i->thenCase);
  auto store = s.as<StoreNode>();
  if (!store || !isDenseRamp(store->index)) return false;
  if (store->buffer->dtype.bits != 32 || store->buffer->dtype.isBool() || store->index.type().lanes > 4) return false;
  if (store->value.as<BroadcastNode>()) return true;
  auto load = store->value.as<LoadNode>();
  return load && isDenseRamp(load->index);
}

class Vectorizer : public IRMutator {
 public:
  explicit Vectorizer(bool copies) : copiesOnly(copies) {}

  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Stmt inner = IRMutator::visitFor(s, n);
    auto f = inner.as<ForNode>();
    if (!f || f->forKind != ForKind::Vectorized) return inner;
    auto lanes = asConstInt(f->extent);
    bool ok = lanes && *lanes >= 2 && *lanes <= 64 && (*lanes & (*lanes - 1)) == 0 && !hasVectorCode(f->body);
    if (ok) {
      try {
        Stmt widened = Widen(f->var.node(), ramp(f->min, Expr(int64_t(1)), int(*lanes))).mutate(f->body);
        if (!copiesOnly) return widened;
        widened = simplify(widened);
        if (isDenseCopy(widened)) return widened;
      } catch (const CannotVectorize&) {
      }
    }
    return makeFor(f->var, f->min, f->extent, ForKind::Serial, f->body);
  }

  bool copiesOnly;
};

}  // namespace

Stmt vectorizeLoops(const Stmt& s) { return Vectorizer(false).mutate(s); }

Stmt vectorizeCopies(const Stmt& s) { return Vectorizer(true).mutate(s); }

}  // namespace tessel::passes
