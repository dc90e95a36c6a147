// Guards hoisted. When every statement of a loop's body is guarded by a condition that does
// not depend on the loop (a padded tap's row test inside the loops over the kernel width and
// the input channels), the test moves in front of the loop, where it runs once instead of
// once per iteration and per statement:
//   for i { if (a && b0) s0; if (a && b1) s1 }   ->   if (a) for i { if (b0) s0; if (b1) s1 }
// Only conditions without memory reads move (a read could be out of bounds in a loop that
// runs zero times, or read what the statements it guards write). Consecutive statements of a block that share a test (an
// unrolled depthwise window: every tap of one kernel row has the same row test) are
// guarded by one test:
//   if (a && b0) s0; if (a) s1; if (a) s2   ->   if (a) { if (b0) s0; s1; s2 }
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

bool sameTerm(const std::vector<Expr>& terms, const Expr& t) {
  for (const auto& u : terms)
    if (structurallyEqual(t, u)) return true;
  return false;
}

/// The statements `guards[i]` guarded by what is left of their condition without `common`.
std::vector<Stmt> withoutTerms(const std::vector<const IfThenElseNode*>& guards, const std::vector<std::vector<Expr>>& terms,
                               const std::vector<Expr>& common) {
  std::vector<Stmt> guarded;
  for (size_t i = 0; i < guards.size(); ++i) {
    std::vector<Expr> rest;
    for (const auto& u : terms[i])
      if (!sameTerm(common, u)) rest.push_back(u);
    guarded.push_back(rest.empty() ? guards[i]->thenCase : makeIf(conjunction(rest), guards[i]->thenCase));
  }
  return guarded;
}

class GuardHoister : public IRMutator {
 public:
  Stmt visitBlock(const Stmt& s, const BlockNode* n) override {
    Stmt visited = IRMutator::visitBlock(s, n);
    auto block = visited.as<BlockNode>();
    if (!block) return visited;
    std::vector<Stmt> out;
    bool changed = false;
    size_t i = 0;
    while (i < block->stmts.size()) {
      // The longest run from i whose guards share at least one test.
      std::vector<const IfThenElseNode*> run;
      std::vector<std::vector<Expr>> terms;
      std::vector<Expr> common;
      for (size_t j = i; j < block->stmts.size(); ++j) {
        auto guard = block->stmts[j].as<IfThenElseNode>();
        if (!guard || guard->elseCase.defined()) break;
        std::vector<Expr> mine;
        conjuncts(guard->condition, mine);
        std::vector<Expr> shared;  // a test that reads memory may read what the run writes
        for (const auto& t : run.empty() ? mine : common)
          if (!readsMemory(t) && sameTerm(mine, t)) shared.push_back(t);
        if (shared.empty()) break;
        run.push_back(guard);
        terms.push_back(std::move(mine));
        common = std::move(shared);
      }
      if (run.size() < 2) {
        out.push_back(block->stmts[i++]);
        continue;
      }
      out.push_back(makeIf(conjunction(common), makeBlock(withoutTerms(run, terms, common))));
      i += run.size();
      changed = true;
    }
    return changed ? makeBlock(out) : visited;
  }

  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Stmt visited = IRMutator::visitFor(s, n);
    auto loop = visited.as<ForNode>();
    if (!loop) return visited;
    std::vector<Stmt> body;
    if (auto b = loop->body.as<BlockNode>()) body = b->stmts;
    else body.push_back(loop->body);
    std::vector<const IfThenElseNode*> guards;
    std::vector<std::vector<Expr>> terms;
    for (const auto& stmt : body) {
      auto guard = stmt.as<IfThenElseNode>();
      if (!guard || guard->elseCase.defined()) return visited;
      guards.push_back(guard);
      terms.emplace_back();
      conjuncts(guard->condition, terms.back());
    }
    if (terms.empty()) return visited;
    std::vector<Expr> common;
    for (const auto& t : terms[0]) {
      if (usesVar(t, loop->var.node()) || readsMemory(t)) continue;
      bool everywhere = true;
      for (size_t i = 1; i < terms.size() && everywhere; ++i) everywhere = sameTerm(terms[i], t);
      if (everywhere) common.push_back(t);
    }
    if (common.empty()) return visited;
    return makeIf(conjunction(common),
                  makeFor(loop->var, loop->min, loop->extent, loop->forKind, makeBlock(withoutTerms(guards, terms, common))));
  }
};

}  // namespace

Stmt hoistInvariantGuards(const Stmt& s) { return GuardHoister().mutate(s); }

}  // namespace tessel::passes
