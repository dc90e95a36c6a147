#include <set>

#include "ir/Mutator.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

struct SharedAccesses {
  std::set<const BufferNode*> reads, writes;
};

class AccessCollector : public IRVisitor {
 public:
  SharedAccesses accesses;
  void visit(const Expr& e) override {
    if (auto l = e.as<LoadNode>(); l && l->buffer->scope == BufferNode::Scope::Shared) accesses.reads.insert(l->buffer.get());
    IRVisitor::visit(e);
  }
  void visit(const Stmt& s) override {
    if (isAsyncCopy(s)) return;  // ordered by the pipeline's own waits and barriers
    if (auto st = s.as<StoreNode>(); st && st->buffer->scope == BufferNode::Scope::Shared)
      accesses.writes.insert(st->buffer.get());
    IRVisitor::visit(s);
  }
};

SharedAccesses accessesOf(const Stmt& s) {
  AccessCollector c;
  c.visit(s);
  return c.accesses;
}

bool intersects(const std::set<const BufferNode*>& a, const std::set<const BufferNode*>& b) {
  for (auto x : a)
    if (b.count(x)) return true;
  return false;
}

class BarrierInserter : public IRMutator {
 public:
  Stmt visitBlock(const Stmt& s, const BlockNode* n) override {
    Stmt mutated = IRMutator::visitBlock(s, n);
    auto block = mutated.as<BlockNode>();
    if (!block) return mutated;
    std::set<const BufferNode*> writtenSince, readSince;  // since the last barrier
    std::vector<Stmt> out;
    for (auto& x : block->stmts) {
      SharedAccesses a = accessesOf(x);
      // Read after another thread's write, or write over what another thread may still read.
      if (intersects(a.reads, writtenSince) || intersects(a.writes, readSince)) {
        out.push_back(gpuBarrier());
        writtenSince.clear();
        readSince.clear();
      }
      writtenSince.insert(a.writes.begin(), a.writes.end());
      readSince.insert(a.reads.begin(), a.reads.end());
      out.push_back(x);
    }
    return makeBlock(out);
  }

  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Stmt mutated = IRMutator::visitFor(s, n);
    auto f = mutated.as<ForNode>();
    if (!f || isGpuBinding(f->forKind)) return mutated;
    // The next iteration overwrites what this one read: wait for every thread to finish reading.
    SharedAccesses a = accessesOf(f->body);
    if (!intersects(a.reads, a.writes)) return mutated;
    return makeFor(f->var, f->min, f->extent, f->forKind, makeBlock({f->body, gpuBarrier()}));
  }
};

}  // namespace

Stmt gpuBarrier() { return makePragma(kGpuBarrierPragma, "shared", makeBlock({})); }

bool isGpuBarrier(const Stmt& s) {
  auto p = s.as<PragmaNode>();
  return p && p->key == kGpuBarrierPragma;
}

Stmt insertSharedMemoryBarriers(const Stmt& s) { return BarrierInserter().mutate(s); }

}  // namespace tessel::passes
