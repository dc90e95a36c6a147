// Loop unrolling: explicit `unroll` annotations and the auto_unroll_max_step pragma.
#include <string>

#include "ir/Mutator.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

constexpr int64_t kMaxExplicitUnroll = 256;

/// Dynamic statement count of s if every loop inside has a constant extent, else -1.
int64_t stepCount(const Stmt& s) {
  if (!s.defined()) return 0;
  switch (s.kind()) {
    case StmtKind::For: {
      auto n = s.as<ForNode>();
      // Unrolling around a parallel loop would make a parallel region (an outlined function
      // and a fork-join) per copy.
      if (n->forKind == ForKind::Parallel) return -1;
      int64_t inner = stepCount(n->body);
      // A loop bound to a GPU index runs once in each thread: a cooperative copy's loop over the
      // block's share is as many steps per thread as its own extent, not times the threads.
      if (isGpuBinding(n->forKind)) return inner;
      auto e = asConstInt(n->extent);
      if (!e || inner < 0) return -1;
      return *e * inner;
    }
    case StmtKind::Block: {
      int64_t total = 0;
      for (auto& x : s.as<BlockNode>()->stmts) {
        int64_t c = stepCount(x);
        if (c < 0) return -1;
        total += c;
      }
      return total;
    }
    case StmtKind::IfThenElse: {
      auto n = s.as<IfThenElseNode>();
      int64_t a = stepCount(n->thenCase), b = stepCount(n->elseCase);
      return (a < 0 || b < 0) ? -1 : a + b;
    }
    case StmtKind::Allocate: return -1;  // unrolling would duplicate the allocation
    case StmtKind::Pragma: return stepCount(s.as<PragmaNode>()->body);
    case StmtKind::Store: return 1;
    case StmtKind::WarpMma: return 1;  // one call: its instructions are unrolled where it is generated
  }
  return -1;
}

Stmt unrollFully(const ForNode* n) {
  int64_t extent = *asConstInt(n->extent);
  std::vector<Stmt> copies;
  for (int64_t i = 0; i < extent; ++i) copies.push_back(substitute(n->body, {{n->var.node(), n->min + Expr(i)}}));
  return makeBlock(copies);
}

class Unroller : public IRMutator {
 public:
  Stmt visitPragma(const Stmt& s, const PragmaNode* n) override {
    if (n->key == "unroll_explicit") {
      // TVM's knob: 0 leaves the loops auto_unroll_max_step picks to the device compiler
      // (`#pragma unroll`), which keeps the kernel's source short; 1 expands them here.
      bool saved = autoExplicit;
      autoExplicit = n->value != "0";
      Stmt body = mutate(n->body);
      autoExplicit = saved;
      return body;
    }
    if (n->key != "auto_unroll_max_step") return IRMutator::visitPragma(s, n);
    int64_t saved = autoLimit;
    autoLimit = std::stoll(n->value);
    Stmt body = mutate(n->body);
    autoLimit = saved;
    return body;
  }
  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Stmt inner = IRMutator::visitFor(s, n);
    auto f = inner.as<ForNode>();
    // A loop bound to a GPU index is not iterated by anyone: there is nothing to unroll.
    if (!f || f->forKind == ForKind::Parallel || f->forKind == ForKind::Vectorized || isGpuBinding(f->forKind)) return inner;
    auto extent = asConstInt(f->extent);
    if (!extent) return inner;
    bool explicitUnroll = f->forKind == ForKind::Unrolled && *extent <= kMaxExplicitUnroll && stepCount(f->body) >= 0;
    int64_t steps = stepCount(inner);
    bool automatic = autoLimit > 0 && steps >= 0 && steps <= autoLimit;
    if (explicitUnroll || (automatic && autoExplicit)) return unrollFully(f);
    if (automatic) return makeFor(f->var, f->min, f->extent, ForKind::Unrolled, f->body);
    return inner;
  }
  int64_t autoLimit = 0;
  bool autoExplicit = true;
};

}  // namespace

Stmt unrollLoops(const Stmt& s) { return Unroller().mutate(s); }

}  // namespace tessel::passes
