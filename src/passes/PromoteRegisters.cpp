// Register promotion: a register tile (a small local accumulator under unrolled loops) is
// indexed only by constants once the loops are unrolled; as an array the C compiler would
// keep it in memory, as separate variables it lives in registers.
#include <map>
#include <optional>

#include "ir/Mutator.h"
#include "passes/Passes.h"

namespace tessel::passes {

using namespace ir;

namespace {

constexpr int64_t kMaxPromotedRegisters = 64;

/// The common lane count of every access to `buffer` in s, if all use constant offsets
/// aligned to it; nullopt otherwise.
class AccessChecker : public IRVisitor {
 public:
  explicit AccessChecker(const BufferNode* b) : buffer(b) {}
  void visit(const Expr& e) override {
    if (auto l = e.as<LoadNode>(); l && l->buffer.get() == buffer) check(l->index);
    IRVisitor::visit(e);
  }
  void visit(const Stmt& s) override {
    if (auto st = s.as<StoreNode>(); st && st->buffer.get() == buffer) check(st->index);
    IRVisitor::visit(s);
  }
  void check(const Expr& index) {
    int l = 1;
    int64_t offset;
    if (auto c = index.as<IntImmNode>()) {
      offset = c->value;
    } else if (auto r = index.as<RampNode>(); r && isConstInt(r->stride, 1) && r->base.as<IntImmNode>()) {
      l = r->lanes;
      offset = r->base.as<IntImmNode>()->value;
    } else {
      ok = false;
      return;
    }
    if (lanes == 0) lanes = l;
    if (lanes != l || offset % l != 0) ok = false;
  }
  const BufferNode* buffer;
  int lanes = 0;
  bool ok = true;
};

class Replace : public IRMutator {
 public:
  Replace(const BufferNode* f, Buffer t) : from(f), to(std::move(t)) {}
  Expr visitLoad(const Expr& e, const LoadNode* n) override {
    return n->buffer.get() == from ? load(to, n->index) : IRMutator::visitLoad(e, n);
  }
  Stmt visitStore(const Stmt& s, const StoreNode* n) override {
    Stmt r = IRMutator::visitStore(s, n);
    auto st = r.as<StoreNode>();
    return st->buffer.get() == from ? makeStore(to, st->index, st->value) : r;
  }
  const BufferNode* from;
  Buffer to;
};

class Promoter : public IRMutator {
 public:
  Stmt visitAllocate(const Stmt& s, const AllocateNode* n) override {
    Stmt body = mutate(n->body);
    const auto& b = *n->buffer;
    if (b.scope == BufferNode::Scope::Local && b.registerLanes == 0) {
      AccessChecker checker(n->buffer.get());
      checker.visit(body);
      if (checker.ok && checker.lanes > 0 && b.elementCount() % checker.lanes == 0 &&
          b.elementCount() / checker.lanes <= kMaxPromotedRegisters) {
        auto promoted = std::make_shared<BufferNode>(b);
        promoted->registerLanes = checker.lanes;
        Buffer nb = promoted;
        return makeAllocate(nb, Replace(n->buffer.get(), nb).mutate(body));
      }
    }
    return body.sameAs(n->body) ? s : makeAllocate(n->buffer, body);
  }
};

}  // namespace

Stmt promoteRegisters(const Stmt& s) { return Promoter().mutate(s); }

}  // namespace tessel::passes
