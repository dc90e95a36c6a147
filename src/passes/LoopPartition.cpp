// Loop partitioning: a loop whose body is guarded by conditions linear in its variable
// (non-divisible splits leave `o * f + i < N`) splits into the range where every guard
// holds for all inner iterations — the simplifier then drops the guards there — and the
// boundary ranges, which keep them.
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "passes/LinearGuard.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

/// A guard `a OP b` over int64 as d = a - b in linear form, computed once per guard: every
/// loop around the guard asks it again, and with hundreds of nested loops (long split chains)
/// recomputing it made partitioning cubic.
struct GuardForm {
  bool usable = false;
  LinearSum difference;
};

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

/// Real kernels partition loops with a handful of loops inside; far beyond any of them.
constexpr int kMaxLoopsInPartitionedBody = 32;

/// The number of loops in `s`, counting no further than `limit` + 1.
int loopsWithin(const Stmt& s, int limit) {
  if (!s.defined() || limit < 0) return 0;
  switch (s.kind()) {
    case StmtKind::For: return 1 + loopsWithin(s.as<ForNode>()->body, limit - 1);
    case StmtKind::Block: {
      int count = 0;
      for (const auto& x : s.as<BlockNode>()->stmts) {
        count += loopsWithin(x, limit - count);
        if (count > limit) break;
      }
      return count;
    }
    case StmtKind::Allocate: return loopsWithin(s.as<AllocateNode>()->body, limit);
    case StmtKind::Pragma: return loopsWithin(s.as<PragmaNode>()->body, limit);
    case StmtKind::IfThenElse: {
      auto n = s.as<IfThenElseNode>();
      int count = loopsWithin(n->thenCase, limit);
      return count > limit ? count : count + loopsWithin(n->elseCase, limit - count);
    }
    default: return 0;
  }
}

struct SafeRange {
  int64_t lo, hi;  // inclusive
};

class Partitioner : public IRMutator {
 public:
  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    auto minC = asConstInt(n->min), extC = asConstInt(n->extent);
    // A parallel loop stays whole: its pieces would run one after the other, each split among
    // the threads on its own (a padded convolution's border rows, one row each, would run on
    // one thread while the others wait). The loops inside it are partitioned instead.
    // A GPU-bound loop stays whole too: its pieces would be two loops bound to one index.
    if (!minC || !extC || n->forKind == ForKind::Vectorized || n->forKind == ForKind::Parallel || isGpuBinding(n->forKind) ||
        *extC < 2)
      return descend(s, n);
    // Each partition copies the loop's body up to twice. Around a deep nest (a step list of
    // hundreds of splits) that multiplies the program, and its compile time, by the depth;
    // such a loop keeps its guards instead.
    if (loopsWithin(n->body, kMaxLoopsInPartitionedBody) > kMaxLoopsInPartitionedBody) return descend(s, n);
    int64_t lo = *minC, hi = *minC + *extC - 1;
    std::vector<SafeRange> guardRanges;  // per guard on the variable: where it holds throughout
    VarBounds inner = bounds;
    collect(n->body, n->var.node(), inner, lo, hi, guardRanges);
    if (guardRanges.empty()) return descend(s, n);
    SafeRange safe{lo, hi};
    for (const SafeRange& r : guardRanges) safe = {std::max(safe.lo, r.lo), std::min(safe.hi, r.hi)};
    if (safe.lo <= lo && safe.hi >= hi) return descend(s, n);
    if (safe.lo > safe.hi) return partitionAtEachGuard(s, n, lo, hi, guardRanges);
    std::vector<Stmt> parts;
    piece(n, lo, safe.lo - 1, false, parts);
    piece(n, safe.lo, safe.hi, true, parts);
    piece(n, safe.hi + 1, hi, false, parts);
    return makeBlock(parts);
  }

 private:
  /// Appends the loop over [a, b] of `n`'s variable, partitioned inside: wholly where it is the
  /// guard-free main range, one level deep where it is a boundary range (a convolution's first
  /// kernel row, at the image's top border, still splits its kernel columns at the side
  /// borders), no deeper: every level multiplies the code by up to three.
  void piece(const ForNode* n, int64_t a, int64_t b, bool main, std::vector<Stmt>& parts) {
    if (a > b) return;
    Stmt body = parts.empty() ? n->body : FreshAllocations().mutate(n->body);
    Stmt loop = makeFor(n->var, Expr(a), Expr(b - a + 1), n->forKind, body);
    bounds[n->var.node()] = Interval{a, b};
    loop = simplify(loop, bounds);
    if (main) {
      loop = mutate(loop);
    } else if (boundaryDepth < kMaxBoundaryDepth) {
      // The loops inside, not this one again: its guards fail somewhere in every boundary
      // range, and splitting it again would spend the one level on itself.
      ++boundaryDepth;
      auto f = loop.as<ForNode>();
      loop = f && f->var.node() == n->var.node() ? makeFor(f->var, f->min, f->extent, f->forKind, mutate(f->body)) : mutate(loop);
      --boundaryDepth;
    }
    parts.push_back(loop);
    bounds.erase(n->var.node());
  }

  /// No iteration is free of every guard: a short loop whose first iteration meets one border
  /// and whose last meets the other (a 7-pixel row in tiles of 4 and 3 under padding on both
  /// sides: the first tile reads the left padding, the last the right and is the ragged one).
  /// It still splits where a guard starts or stops holding throughout, so that each piece
  /// knows its own guards and loses the others. The pieces are this loop's main code (there is
  /// no other), so the loops inside them are partitioned as a main range's are. A loop that
  /// would split into more than three pieces keeps its guards (each piece copies the body).
  Stmt partitionAtEachGuard(const Stmt& s, const ForNode* n, int64_t lo, int64_t hi, const std::vector<SafeRange>& guardRanges) {
    std::vector<int64_t> cuts;  // the first iteration of every piece after the first
    for (const SafeRange& r : guardRanges) {
      if (r.lo > r.hi) continue;  // holds throughout nowhere: no iteration loses it
      for (int64_t cut : {r.lo, r.hi + 1})
        if (cut > lo && cut <= hi) cuts.push_back(cut);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    if (cuts.empty() || cuts.size() + 1 > kMaxPiecesWithoutMainRange) return descend(s, n);
    std::vector<Stmt> parts;
    int64_t first = lo;
    for (int64_t cut : cuts) {
      piece(n, first, cut - 1, true, parts);
      first = cut;
    }
    piece(n, first, hi, true, parts);
    return makeBlock(parts);
  }

  Stmt descend(const Stmt& s, const ForNode* n) {
    auto minB = constBounds(n->min, bounds), extB = constBounds(n->extent, bounds);
    if (minB.bounded() && extB.bounded()) bounds[n->var.node()] = Interval{minB.min, minB.max + extB.max - 1};
    Stmt r = IRMutator::visitFor(s, n);
    bounds.erase(n->var.node());
    return r;
  }

  /// For every guard inside `s` that depends on `var`, the range of [lo, hi] where it holds
  /// for all iterations of the loops inside (empty where it never does).
  void collect(const Stmt& s, const VarNode* var, VarBounds& inner, int64_t lo, int64_t hi, std::vector<SafeRange>& ranges) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::For: {
        auto f = s.as<ForNode>();
        auto minB = constBounds(f->min, inner), extB = constBounds(f->extent, inner);
        if (!minB.bounded() || !extB.bounded()) return;
        inner[f->var.node()] = Interval{minB.min, minB.max + extB.max - 1};
        collect(f->body, var, inner, lo, hi, ranges);
        return;
      }
      case StmtKind::Block:
        for (auto& x : s.as<BlockNode>()->stmts) collect(x, var, inner, lo, hi, ranges);
        return;
      case StmtKind::Allocate: collect(s.as<AllocateNode>()->body, var, inner, lo, hi, ranges); return;
      case StmtKind::Pragma: collect(s.as<PragmaNode>()->body, var, inner, lo, hi, ranges); return;
      case StmtKind::WarpMma: return;  // no guards inside
      case StmtKind::IfThenElse: {
        auto i = s.as<IfThenElseNode>();
        if (!i->elseCase.defined()) constrain(i->condition, var, inner, lo, hi, ranges);
        collect(i->thenCase, var, inner, lo, hi, ranges);
        return;
      }
      case StmtKind::Store: return;
    }
  }

  void constrain(const Expr& c, const VarNode* var, const VarBounds& inner, int64_t lo, int64_t hi, std::vector<SafeRange>& ranges) {
    if (c.kind() == ExprKind::And) {
      auto b = static_cast<const BinaryNode*>(c.get());
      constrain(b->a, var, inner, lo, hi, ranges);
      constrain(b->b, var, inner, lo, hi, ranges);
      return;
    }
    ExprKind k = c.kind();
    if (k != ExprKind::LT && k != ExprKind::LE && k != ExprKind::GE && k != ExprKind::GT) return;
    const GuardForm& form = formOf(c);
    if (!form.usable) return;
    if (auto guard = solveGuard(k, form.difference, var, inner)) {
      SafeRange r{lo, hi};
      if (narrowToAll(*guard, r.lo, r.hi)) ranges.push_back(r);
    }
  }

  const GuardForm& formOf(const Expr& guard) {
    auto [it, inserted] = guardForms.try_emplace(guard.get());
    if (inserted) {
      keepAlive.push_back(guard);  // the node's address is the key
      auto b = static_cast<const BinaryNode*>(guard.get());
      if (b->a.type() == DataType::int64()) {
        it->second.usable = true;
        it->second.difference = linearSum(simplify(b->a - b->b));
      }
    }
    return it->second;
  }

  static constexpr int kMaxBoundaryDepth = 1;
  static constexpr size_t kMaxPiecesWithoutMainRange = 3;
  int boundaryDepth = 0;
  VarBounds bounds;
  std::unordered_map<const ExprNode*, GuardForm> guardForms;
  std::vector<Expr> keepAlive;
};

}  // namespace

Stmt partitionLoops(const Stmt& s) { return Partitioner().mutate(s); }

}  // namespace tessel::passes
