#include "ir/Mutator.h"

#include "support/Error.h"

namespace tessel::ir {

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm: return e;
    case ExprKind::Var: return visitVar(e, e.as<VarNode>());
    case ExprKind::Not: return visitNot(e, e.as<NotNode>());
    case ExprKind::Select:
    case ExprKind::IfThenElse: return visitSelect(e, static_cast<const SelectNode*>(e.get()));
    case ExprKind::Cast: return visitCast(e, e.as<CastNode>());
    case ExprKind::Call: return visitCall(e, e.as<CallNode>());
    case ExprKind::ProducerLoad: return visitProducerLoad(e, e.as<ProducerLoadNode>());
    case ExprKind::Load: return visitLoad(e, e.as<LoadNode>());
    case ExprKind::Ramp: return visitRamp(e, e.as<RampNode>());
    case ExprKind::Broadcast: return visitBroadcast(e, e.as<BroadcastNode>());
    case ExprKind::Reduce: return visitReduce(e, e.as<ReduceNode>());
    default: return visitBinary(e, static_cast<const BinaryNode*>(e.get()));
  }
}

Expr IRMutator::visitBinary(const Expr& e, const BinaryNode* n) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.sameAs(n->a) && b.sameAs(n->b)) return e;
  return binary(e.kind(), a, b);
}

Expr IRMutator::visitNot(const Expr& e, const NotNode* n) {
  Expr a = mutate(n->a);
  return a.sameAs(n->a) ? e : !a;
}

Expr IRMutator::visitLoad(const Expr& e, const LoadNode* n) {
  Expr i = mutate(n->index);
  return i.sameAs(n->index) ? e : load(n->buffer, i);
}

Expr IRMutator::visitProducerLoad(const Expr& e, const ProducerLoadNode* n) {
  bool changed = false;
  std::vector<Expr> idx;
  for (auto& i : n->indices) {
    idx.push_back(mutate(i));
    changed |= !idx.back().sameAs(i);
  }
  return changed ? producerLoad(n->producer, e.type(), idx, n->identity) : e;
}

Expr IRMutator::visitReduce(const Expr& e, const ReduceNode* n) {
  Expr s = mutate(n->source);
  Expr c = mutate(n->condition);
  if (s.sameAs(n->source) && c.sameAs(n->condition)) return e;
  return reduce(n->op, s, n->axes, c);
}

Expr IRMutator::visitSelect(const Expr& e, const SelectNode* n) {
  Expr c = mutate(n->condition), t = mutate(n->trueValue), f = mutate(n->falseValue);
  if (c.sameAs(n->condition) && t.sameAs(n->trueValue) && f.sameAs(n->falseValue)) return e;
  return e.kind() == ExprKind::Select ? select(c, t, f) : ifThenElse(c, t, f);
}

Expr IRMutator::visitRamp(const Expr& e, const RampNode* n) {
  Expr b = mutate(n->base), s = mutate(n->stride);
  if (b.sameAs(n->base) && s.sameAs(n->stride)) return e;
  return ramp(b, s, n->lanes);
}

Expr IRMutator::visitBroadcast(const Expr& e, const BroadcastNode* n) {
  Expr v = mutate(n->value);
  return v.sameAs(n->value) ? e : broadcast(v, n->lanes);
}

Expr IRMutator::visitCast(const Expr& e, const CastNode* n) {
  Expr v = mutate(n->value);
  // The value may have become a vector (vectorization): the cast takes its lanes.
  return v.sameAs(n->value) ? e : cast(e.type().withLanes(v.type().lanes), v);
}

Expr IRMutator::visitCall(const Expr& e, const CallNode* n) {
  bool changed = false;
  std::vector<Expr> args;
  for (auto& a : n->args) {
    args.push_back(mutate(a));
    changed |= !args.back().sameAs(a);
  }
  return changed ? call(n->op, args) : e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
    case StmtKind::For: return visitFor(s, s.as<ForNode>());
    case StmtKind::Store: return visitStore(s, s.as<StoreNode>());
    case StmtKind::IfThenElse: return visitIf(s, s.as<IfThenElseNode>());
    case StmtKind::Block: return visitBlock(s, s.as<BlockNode>());
    case StmtKind::Allocate: return visitAllocate(s, s.as<AllocateNode>());
    case StmtKind::Pragma: return visitPragma(s, s.as<PragmaNode>());
    case StmtKind::WarpMma: return visitWarpMma(s, s.as<WarpMmaNode>());
  }
  return s;
}

Stmt IRMutator::visitFor(const Stmt& s, const ForNode* n) {
  Expr m = mutate(n->min), e = mutate(n->extent);
  Stmt b = mutate(n->body);
  if (m.sameAs(n->min) && e.sameAs(n->extent) && b.sameAs(n->body)) return s;
  return makeFor(n->var, m, e, n->forKind, b);
}

Stmt IRMutator::visitStore(const Stmt& s, const StoreNode* n) {
  Expr i = mutate(n->index), v = mutate(n->value);
  if (i.sameAs(n->index) && v.sameAs(n->value)) return s;
  return makeStore(n->buffer, i, v);
}

Stmt IRMutator::visitIf(const Stmt& s, const IfThenElseNode* n) {
  Expr c = mutate(n->condition);
  Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
  if (c.sameAs(n->condition) && t.sameAs(n->thenCase) && e.sameAs(n->elseCase)) return s;
  return makeIf(c, t, e);
}

Stmt IRMutator::visitBlock(const Stmt& s, const BlockNode* n) {
  bool changed = false;
  std::vector<Stmt> out;
  for (auto& x : n->stmts) {
    out.push_back(mutate(x));
    changed |= !out.back().sameAs(x);
  }
  return changed ? makeBlock(out) : s;
}

Stmt IRMutator::visitAllocate(const Stmt& s, const AllocateNode* n) {
  Stmt b = mutate(n->body);
  return b.sameAs(n->body) ? s : makeAllocate(n->buffer, b);
}

Stmt IRMutator::visitPragma(const Stmt& s, const PragmaNode* n) {
  Stmt b = mutate(n->body);
  return b.sameAs(n->body) ? s : makePragma(n->key, n->value, b);
}

Stmt IRMutator::visitWarpMma(const Stmt& s, const WarpMmaNode* n) {
  Expr acc = mutate(n->accumulator), a = mutate(n->a), b = mutate(n->b);
  if (acc.sameAs(n->accumulator) && a.sameAs(n->a) && b.sameAs(n->b)) return s;
  WarpMmaNode copy = *n;
  copy.accumulator = acc;
  copy.a = a;
  copy.b = b;
  return makeWarpMma(copy);
}

void forEachChild(const Expr& e, const std::function<void(const Expr&)>& fn) {
  switch (e.kind()) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::Var: return;
    case ExprKind::Not: fn(e.as<NotNode>()->a); return;
    case ExprKind::Select:
    case ExprKind::IfThenElse: {
      auto n = static_cast<const SelectNode*>(e.get());
      fn(n->condition);
      fn(n->trueValue);
      fn(n->falseValue);
      return;
    }
    case ExprKind::Cast: fn(e.as<CastNode>()->value); return;
    case ExprKind::Call:
      for (auto& a : e.as<CallNode>()->args) fn(a);
      return;
    case ExprKind::ProducerLoad:
      for (auto& i : e.as<ProducerLoadNode>()->indices) fn(i);
      return;
    case ExprKind::Load: fn(e.as<LoadNode>()->index); return;
    case ExprKind::Ramp:
      fn(e.as<RampNode>()->base);
      fn(e.as<RampNode>()->stride);
      return;
    case ExprKind::Broadcast: fn(e.as<BroadcastNode>()->value); return;
    case ExprKind::Reduce: {
      auto r = e.as<ReduceNode>();
      fn(r->source);
      if (r->condition.defined()) fn(r->condition);
      return;
    }
    default: {
      auto b = static_cast<const BinaryNode*>(e.get());
      fn(b->a);
      fn(b->b);
    }
  }
}

void IRVisitor::visit(const Expr& e) {
  if (e.defined()) forEachChild(e, [this](const Expr& c) { visit(c); });
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::For: {
      auto n = s.as<ForNode>();
      visit(n->min);
      visit(n->extent);
      visit(n->body);
      return;
    }
    case StmtKind::Store: {
      auto n = s.as<StoreNode>();
      visit(n->index);
      visit(n->value);
      return;
    }
    case StmtKind::IfThenElse: {
      auto n = s.as<IfThenElseNode>();
      visit(n->condition);
      visit(n->thenCase);
      visit(n->elseCase);
      return;
    }
    case StmtKind::Block:
      for (auto& x : s.as<BlockNode>()->stmts) visit(x);
      return;
    case StmtKind::Allocate: visit(s.as<AllocateNode>()->body); return;
    case StmtKind::Pragma: visit(s.as<PragmaNode>()->body); return;
    case StmtKind::WarpMma: {
      auto n = s.as<WarpMmaNode>();
      visit(n->accumulator);
      visit(n->a);
      visit(n->b);
      return;
    }
  }
}

namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& m) : map_(m) {}
  Expr visitVar(const Expr& e, const VarNode* v) override {
    auto it = map_.find(v);
    return it == map_.end() ? e : it->second;
  }
  const VarMap& map_;
};

class VarUseFinder : public IRVisitor {
 public:
  explicit VarUseFinder(std::function<bool(const VarNode*)> p) : pred(std::move(p)) {}
  void visit(const Expr& e) override {
    if (found || !e.defined()) return;
    if (auto v = e.as<VarNode>()) {
      found = pred(v);
      return;
    }
    IRVisitor::visit(e);
  }
  void visit(const Stmt& s) override {
    if (!found) IRVisitor::visit(s);
  }
  std::function<bool(const VarNode*)> pred;
  bool found = false;
};
}  // namespace

Expr substitute(const Expr& e, const VarMap& m) { return m.empty() ? e : Substituter(m).mutate(e); }
Stmt substitute(const Stmt& s, const VarMap& m) { return m.empty() ? s : Substituter(m).mutate(s); }

bool usesVar(const Expr& e, const VarNode* var) {
  VarUseFinder f([var](const VarNode* v) { return v == var; });
  f.visit(e);
  return f.found;
}

bool usesVar(const Stmt& s, const VarNode* var) {
  VarUseFinder f([var](const VarNode* v) { return v == var; });
  f.visit(s);
  return f.found;
}

bool usesAnyVar(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  VarUseFinder f(pred);
  f.visit(e);
  return f.found;
}

namespace {

/// Finds a load from `buffer` and, when `countStores`, a store to it.
struct BufferAccessFinder : IRVisitor {
  const BufferNode* buffer = nullptr;
  bool countStores = false;
  bool found = false;
  void visit(const Expr& x) override {
    if (auto l = x.as<LoadNode>(); l && l->buffer.get() == buffer) found = true;
    if (!found) IRVisitor::visit(x);
  }
  void visit(const Stmt& x) override {
    if (auto st = x.as<StoreNode>(); countStores && st && st->buffer.get() == buffer) found = true;
    if (!found) IRVisitor::visit(x);
  }
};

}  // namespace

bool readsBuffer(const Expr& e, const BufferNode* buffer) {
  BufferAccessFinder finder;
  finder.buffer = buffer;
  finder.visit(e);
  return finder.found;
}

bool accessesBuffer(const Stmt& s, const BufferNode* buffer) {
  BufferAccessFinder finder;
  finder.buffer = buffer;
  finder.countStores = true;
  finder.visit(s);
  return finder.found;
}

}  // namespace tessel::ir
