// Invariant guards hoisted: when every statement of a loop's body is guarded by a condition
// that does not depend on the loop (a padded tap's row test inside the loops over the
// kernel width and the input channels), the test moves in front of the loop, where it runs
// once instead of once per iteration and per statement:
//   for i { if (a && b0) s0; if (a && b1) s1 }   ->   if (a) for i { if (b0) s0; if (b1) s1 }
// Only conditions without memory reads move (a read could be out of bounds in a loop that
// runs zero times).
#include <vector>

#include "ir/Equality.h"
#include "ir/Mutator.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (e.kind() == ExprKind::And) {
    auto b = static_cast<const BinaryNode*>(e.get());
    conjuncts(b->a, out);
    conjuncts(b->b, out);
    return;
  }
  out.push_back(e);
}

Expr conjunction(const std::vector<Expr>& terms) {
  Expr all;
  for (const auto& t : terms) all = all.defined() ? (all && t) : t;
  return all;
}

bool readsMemory(const Expr& e) {
  struct V : IRVisitor {
    bool found = false;
    void visit(const Expr& x) override {
      if (x.kind() == ExprKind::Load || x.kind() == ExprKind::ProducerLoad) found = true;
      else IRVisitor::visit(x);
    }
  } v;
  v.visit(e);
  return v.found;
}

class GuardHoister : public IRMutator {
 public:
  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Stmt visited = IRMutator::visitFor(s, n);
    auto loop = visited.as<ForNode>();
    if (!loop) return visited;
    std::vector<Stmt> body;
    if (auto b = loop->body.as<BlockNode>()) body = b->stmts;
    else body.push_back(loop->body);
    std::vector<std::vector<Expr>> terms;
    for (const auto& stmt : body) {
      auto guard = stmt.as<IfThenElseNode>();
      if (!guard || guard->elseCase.defined()) return visited;
      terms.emplace_back();
      conjuncts(guard->condition, terms.back());
    }
    if (terms.empty()) return visited;
    std::vector<Expr> common;
    for (const auto& t : terms[0]) {
      if (usesVar(t, loop->var.node()) || readsMemory(t)) continue;
      bool everywhere = true;
      for (size_t i = 1; i < terms.size() && everywhere; ++i) {
        everywhere = false;
        for (const auto& u : terms[i]) everywhere = everywhere || structurallyEqual(t, u);
      }
      if (everywhere) common.push_back(t);
    }
    if (common.empty()) return visited;
    std::vector<Stmt> guarded;
    for (size_t i = 0; i < body.size(); ++i) {
      std::vector<Expr> rest;
      for (const auto& u : terms[i]) {
        bool hoisted = false;
        for (const auto& c : common) hoisted = hoisted || structurallyEqual(c, u);
        if (!hoisted) rest.push_back(u);
      }
      const Stmt& then = body[i].as<IfThenElseNode>()->thenCase;
      guarded.push_back(rest.empty() ? then : makeIf(conjunction(rest), then));
    }
    return makeIf(conjunction(common), makeFor(loop->var, loop->min, loop->extent, loop->forKind, makeBlock(guarded)));
  }
};

}  // namespace

Stmt hoistInvariantGuards(const Stmt& s) { return GuardHoister().mutate(s); }

}  // namespace tessel::passes
