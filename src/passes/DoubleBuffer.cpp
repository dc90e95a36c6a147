// Double-buffered shared copies (schedule::DoubleBufferStep) staged through registers. A copy
// into shared memory computed at a serial loop (a GEMM's chunk loop) is rewritten as
//
//   regs = copy's values at k = min                       (before the loop)
//   for k:
//     shared = regs                                       (the copy, from registers)
//     if (k + 1 < min + extent) regs = values at k + 1    (loads issued before the arithmetic)
//     ... the computation on shared ...
//
// so that each thread's loads of the next chunk are in flight while the block multiplies the
// current one (the barriers come later: insertSharedMemoryBarriers). A thread keeps its share
// of the copy in a local array indexed by constants once the copy's loops are unrolled.
#include <fmt/format.h>

#include <set>

#include "ir/Mutator.h"
#include "passes/DoubleBufferCopies.h"
#include "passes/Passes.h"
#include "schedule/Steps.h"
#include "support/Error.h"

namespace tessel::passes {

using namespace ir;

namespace {

/// One double-buffered copy: its statements rewritten into the loads of a thread's share into
/// registers (`prefetch`) and the stores of the registers into shared memory (`fill`).
class Staging {
 public:
  Staging(std::string stage, const std::set<const BufferNode*>& written) : stage_(std::move(stage)), written_(written) {}

  /// Elements of the copy one thread stores: a loop bound to a GPU index runs once per thread.
  int64_t elements(const Stmt& s) const {
    if (!s.defined()) return 0;
    switch (s.kind()) {
      case StmtKind::Block: {
        int64_t total = 0;
        for (const auto& x : s.as<BlockNode>()->stmts) total += elements(x);
        return total;
      }
      case StmtKind::For: {
        auto f = s.as<ForNode>();
        if (isGpuBinding(f->forKind)) return elements(f->body);
        const int64_t* extent = asConstInt(f->extent);
        TESSEL_CHECK(extent, "double_buffer {}: the copy's loop '{}' has no constant extent, so its share of registers is unknown",
                     stage_, f->var.name());
        return *extent * elements(f->body);
      }
      case StmtKind::IfThenElse: return elements(s.as<IfThenElseNode>()->thenCase) + elements(s.as<IfThenElseNode>()->elseCase);
      case StmtKind::Pragma: return elements(s.as<PragmaNode>()->body);
      case StmtKind::Store: return s.as<StoreNode>()->index.type().lanes;
      default: break;
    }
    throw Error(fmt::format("double_buffer {}: the copy holds a statement other than loops, guards and stores", stage_));
  }

  /// The copy's element type (the shared buffer's).
  DataType elementType(const Stmt& s) const {
    struct First : IRVisitor {
      const StoreNode* store = nullptr;
      void visit(const Stmt& x) override {
        if (auto st = x.as<StoreNode>(); st && !store) store = st;
        IRVisitor::visit(x);
      }
    } first;
    first.visit(s);
    TESSEL_CHECK(first.store, "double_buffer {}: the copy stores nothing", stage_);
    return first.store->buffer->dtype;
  }

  /// {prefetch, fill} of `s`, whose first element is register `base`.
  std::pair<Stmt, Stmt> rewrite(const Stmt& s, const Buffer& regs, const Expr& base) {
    if (!s.defined()) return {s, s};
    switch (s.kind()) {
      case StmtKind::Block: {
        std::vector<Stmt> prefetch, fill;
        Expr at = base;
        for (const auto& x : s.as<BlockNode>()->stmts) {
          auto [p, f] = rewrite(x, regs, at);
          prefetch.push_back(p);
          fill.push_back(f);
          at = at + Expr(elements(x));
        }
        return {makeBlock(prefetch), makeBlock(fill)};
      }
      case StmtKind::For: {
        auto f = s.as<ForNode>();
        // Iteration v of a loop every thread runs takes the registers after v whole bodies.
        Expr first = isGpuBinding(f->forKind) ? base : base + (f->var - f->min) * Expr(elements(f->body));
        auto [p, b] = rewrite(f->body, regs, first);
        return {makeFor(f->var, f->min, f->extent, f->forKind, p), makeFor(f->var, f->min, f->extent, f->forKind, b)};
      }
      case StmtKind::IfThenElse: {
        auto n = s.as<IfThenElseNode>();
        auto [pt, ft] = rewrite(n->thenCase, regs, base);
        auto [pe, fe] = rewrite(n->elseCase, regs, base + Expr(elements(n->thenCase)));
        return {makeIf(n->condition, pt, pe), makeIf(n->condition, ft, fe)};
      }
      case StmtKind::Pragma: {
        auto n = s.as<PragmaNode>();
        TESSEL_CHECK(n->key != schedule::kBufferStagesPragma,
                     "double_buffer {}: {} stages need asynchronous copies into shared memory (CUDA sm_80 and later); registers "
                     "stage two",
                     stage_, n->value);
        auto [p, f] = rewrite(n->body, regs, base);
        return {makePragma(n->key, n->value, p), makePragma(n->key, n->value, f)};
      }
      case StmtKind::Store: {
        auto n = s.as<StoreNode>();
        TESSEL_CHECK(n->buffer->scope == BufferNode::Scope::Shared, "double_buffer {}: the copy stores into '{}', not shared memory",
                     stage_, n->buffer->name);
        checkDoubleBufferedSource(stage_, n->value, written_);
        int lanes = n->index.type().lanes;
        Expr at = lanes > 1 ? ramp(base, Expr(int64_t(1)), lanes) : base;
        return {makeStore(regs, at, n->value), makeStore(n->buffer, n->index, load(regs, at))};
      }
      default: break;
    }
    throw Error(fmt::format("double_buffer {}: the copy holds a statement other than loops, guards and stores", stage_));
  }

 private:
  std::string stage_;
  const std::set<const BufferNode*>& written_;
};

class DoubleBufferer : public IRMutator {
 public:
  explicit DoubleBufferer(std::set<const BufferNode*> written) : written_(std::move(written)) {}

  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Stmt visited = IRMutator::visitFor(s, n);
    auto loop = serialLoopBody(visited);
    if (!loop) return visited;
    const ForNode* f = loop->loop;
    const std::vector<const AllocateNode*>& allocations = loop->allocations;
    std::vector<Stmt> stmts = loop->stmts;
    size_t last = stmts.size();
    for (size_t i = 0; i < stmts.size(); ++i)
      if (isDoubleBufferedCopy(stmts[i])) last = i;
    if (last == stmts.size()) return visited;

    std::vector<Buffer> registers;
    std::vector<Stmt> prefetches;
    for (auto& x : stmts) {
      if (!isDoubleBufferedCopy(x)) continue;
      auto p = x.as<PragmaNode>();
      Staging staging(p->value, written_);
      Buffer regs = makeBuffer(p->value + "_next", staging.elementType(p->body), {staging.elements(p->body)}, BufferNode::Scope::Local);
      auto [prefetch, fill] = staging.rewrite(p->body, regs, Expr(int64_t(0)));
      registers.push_back(regs);
      prefetches.push_back(prefetch);
      x = fill;
    }
    Expr next = f->var + Expr(int64_t(1));
    Stmt ahead = makeIf(next < f->min + f->extent, substitute(makeBlock(prefetches), {{f->var.node(), next}}));
    stmts.insert(stmts.begin() + std::ptrdiff_t(last) + 1, ahead);
    Stmt newBody = makeBlock(stmts);
    for (auto a = allocations.rbegin(); a != allocations.rend(); ++a) newBody = makeAllocate((*a)->buffer, newBody);
    Stmt result = makeBlock({substitute(makeBlock(prefetches), {{f->var.node(), f->min}}),
                             makeFor(f->var, f->min, f->extent, f->forKind, newBody)});
    for (auto r = registers.rbegin(); r != registers.rend(); ++r) result = makeAllocate(*r, result);
    return result;
  }

 private:
  std::set<const BufferNode*> written_;
};

}  // namespace

std::optional<SerialLoopBody> serialLoopBody(const Stmt& s) {
  auto f = s.as<ForNode>();
  if (!f || isGpuBinding(f->forKind) || f->forKind == ForKind::Parallel || f->forKind == ForKind::Vectorized) return std::nullopt;
  SerialLoopBody loop;
  loop.loop = f;
  Stmt body = f->body;
  while (auto a = body.as<AllocateNode>()) {
    loop.allocations.push_back(a);
    body = a->body;
  }
  loop.stmts = body.as<BlockNode>() ? body.as<BlockNode>()->stmts : std::vector<Stmt>{body};
  return loop;
}

bool isDoubleBufferedCopy(const Stmt& s) {
  auto p = s.as<PragmaNode>();
  return p && p->key == schedule::kDoubleBufferPragma;
}

std::set<const BufferNode*> storedBuffers(const Stmt& s) {
  struct Stores : IRVisitor {
    std::set<const BufferNode*> found;
    void visit(const Stmt& x) override {
      if (auto st = x.as<StoreNode>()) found.insert(st->buffer.get());
      IRVisitor::visit(x);
    }
  } stores;
  stores.visit(s);
  return stores.found;
}

void checkDoubleBufferedSource(const std::string& stage, const Expr& value, const std::set<const BufferNode*>& written) {
  struct Loads : IRVisitor {
    std::vector<Buffer> found;
    void visit(const Expr& e) override {
      if (auto l = e.as<LoadNode>()) found.push_back(l->buffer);
      IRVisitor::visit(e);
    }
  } loads;
  loads.visit(value);
  for (const auto& b : loads.found) {
    TESSEL_CHECK(b->scope == BufferNode::Scope::Global, "double_buffer {}: the copy reads '{}', which is not in device memory", stage,
                 b->name);
    TESSEL_CHECK(!written.count(b.get()),
                 "double_buffer {}: the copy reads '{}', which the kernel also writes (a value loaded an iteration early could be "
                 "stale)",
                 stage, b->name);
  }
}

Stmt dropDoubleBufferPragmas(const Stmt& s) {
  struct Drop : IRMutator {
    Stmt visitPragma(const Stmt& x, const PragmaNode* n) override {
      if (n->key == schedule::kDoubleBufferPragma || n->key == schedule::kBufferStagesPragma) return mutate(n->body);
      return IRMutator::visitPragma(x, n);
    }
  };
  return Drop().mutate(s);
}

Stmt prefetchDoubleBuffers(const Stmt& s) { return dropDoubleBufferPragmas(DoubleBufferer(storedBuffers(s)).mutate(s)); }

}  // namespace tessel::passes
