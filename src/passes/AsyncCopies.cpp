// Double-buffered shared copies (schedule::DoubleBufferStep) as a pipeline of asynchronous
// copies, on GPUs that have them (PTX `cp.async`, sm_80 and later). A copy computed at a serial
// loop k of extent E, kept in S stages, becomes
//
//   shared'[S x the copy]                                   (one slot per stage)
//   for j in 0 .. S-2: copy of iteration j -> slot j; commit (the prologue)
//   for k:
//     wait until at most S-2 groups are in flight           (iteration k's copy has landed)
//     barrier                                               (every thread's part of it; every
//                                                            thread done with slot (k-1) % S)
//     if (k + S-1 < E) copy of iteration k + S-1 -> slot (k + S-1) % S
//     commit                                                (an empty group past the end keeps
//                                                            the count)
//     ... the computation on slot k % S ...
//   barrier                                                 (before anything reuses the slots)
//
// so S - 1 iterations' loads are in flight while the block computes one, with one barrier per
// iteration, and the loaded values go to shared memory without passing through registers
// (CUDA C++ Programming Guide, "Asynchronous Data Copies"; CUTLASS's multistage mainloop).
// A store whose value is not a plain load of device memory (or a guarded one, a zero where the
// guard fails) stays a synchronous store into its slot, which the same barrier orders.
#include <fmt/format.h>

#include <map>

#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "passes/DoubleBufferCopies.h"
#include "passes/GpuLaunch.h"
#include "passes/Passes.h"
#include "schedule/Steps.h"
#include "support/Error.h"

namespace tessel::passes {

using namespace ir;

namespace {

/// `index` moved by `offset` elements (a vector index stays a ramp).
Expr offsetIndex(const Expr& index, const Expr& offset) {
  if (auto r = index.as<RampNode>()) return ramp(r->base + offset, r->stride, r->lanes);
  return index + offset;
}

/// A copy's buffers, each with its slots: the new buffer and the elements of one slot.
struct Slots {
  Buffer buffer;
  int64_t size = 0;
};
using SlotMap = std::map<const BufferNode*, Slots>;

/// Every access to a staged buffer goes to the slot of iteration `iteration`.
class ToSlot : public IRMutator {
 public:
  ToSlot(const SlotMap& slots, Expr slot) : slots_(slots), slot_(std::move(slot)) {}

  Expr visitLoad(const Expr& e, const LoadNode* n) override {
    Expr index = mutate(n->index);
    auto it = slots_.find(n->buffer.get());
    if (it == slots_.end()) return index.sameAs(n->index) ? e : load(n->buffer, index);
    return load(it->second.buffer, offsetIndex(index, slot_ * Expr(it->second.size)));
  }
  Stmt visitStore(const Stmt& s, const StoreNode* n) override {
    Expr index = mutate(n->index), value = mutate(n->value);
    auto it = slots_.find(n->buffer.get());
    if (it == slots_.end()) return index.sameAs(n->index) && value.sameAs(n->value) ? s : makeStore(n->buffer, index, value);
    return makeStore(it->second.buffer, offsetIndex(index, slot_ * Expr(it->second.size)), value);
  }

 private:
  const SlotMap& slots_;
  Expr slot_;
};

/// The copy's stores into shared memory marked asynchronous where their value allows.
class MarkAsync : public IRMutator {
 public:
  MarkAsync(std::string stage, const std::set<const BufferNode*>& written) : stage_(std::move(stage)), written_(written) {}

  /// A vector store of the copy would have to be issued element by element.
  bool piecewise = false;

  Stmt visitStore(const Stmt& s, const StoreNode* n) override {
    TESSEL_CHECK(n->buffer->scope == BufferNode::Scope::Shared, "double_buffer {}: the copy stores into '{}', not shared memory", stage_,
                 n->buffer->name);
    checkDoubleBufferedSource(stage_, n->value, written_);
    auto form = asyncCopyFormOf(n);
    if (!form) return s;
    piecewise = piecewise || !form->whole;
    return makePragma(kAsyncCopyPragma, stage_, s);
  }
  Stmt visitPragma(const Stmt& s, const PragmaNode* n) override {
    if (n->key == schedule::kBufferStagesPragma) return mutate(n->body);
    return IRMutator::visitPragma(s, n);
  }

 private:
  std::string stage_;
  const std::set<const BufferNode*>& written_;
};

/// The stages of a double-buffered copy: 2 unless its buffer_stages pragma says otherwise.
int stagesOf(const PragmaNode* copy) {
  auto inner = copy->body.as<PragmaNode>();
  if (!inner || inner->key != schedule::kBufferStagesPragma) return 2;
  return std::stoi(inner->value);
}

Stmt asyncCommit() { return makePragma(kAsyncCommitPragma, "", makeBlock({})); }
Stmt asyncWait(int inFlight) { return makePragma(kAsyncWaitPragma, std::to_string(inFlight), makeBlock({})); }

class Pipeliner : public IRMutator {
 public:
  Pipeliner(std::set<const BufferNode*> written, int64_t spareSharedBytes)
      : written_(std::move(written)), spareSharedBytes_(spareSharedBytes) {}

  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Stmt visited = IRMutator::visitFor(s, n);
    auto loop = serialLoopBody(visited);
    if (!loop) return visited;
    const ForNode* f = loop->loop;
    const std::vector<const AllocateNode*>& allocations = loop->allocations;
    std::vector<Stmt> copies, rest;
    int stages = 0;
    bool piecewise = false;
    std::string firstStage;
    for (const auto& x : loop->stmts) {
      if (!isDoubleBufferedCopy(x)) {
        rest.push_back(x);
        continue;
      }
      auto p = x.as<PragmaNode>();
      int copyStages = stagesOf(p);
      TESSEL_CHECK(stages == 0 || copyStages == stages,
                   "double_buffer: the copies '{}' ({} stages) and '{}' ({}) at loop '{}' differ in stages", firstStage, stages, p->value,
                   copyStages, f->var.name());
      stages = copyStages;
      if (firstStage.empty()) firstStage = p->value;
      MarkAsync mark(p->value, written_);
      copies.push_back(mark.mutate(p->body));
      piecewise = piecewise || mark.piecewise;
    }
    if (copies.empty()) return visited;
    // Copies that would go element by element (4-byte cp.async for a float4 a thread loads)
    // lose to registers in two stages: on an H200 (bench_gpu_gemm, 2026-12-03) BERT-base's TF32
    // tensor-core tiles, whose columns operand's rows are padded to an odd stride, ran 1.10-1.36x
    // slower that way than through registers. Deeper pipelines have no such way out.
    if (stages == 2 && piecewise) return visited;

    // Each staged buffer gets its slots; the other allocations stay in the loop.
    SlotMap slots;
    std::set<const BufferNode*> staged = storedBuffers(makeBlock(copies));
    std::vector<Buffer> kept, slotBuffers;  // in the order of the allocations (the kernel's text is deterministic)
    for (auto a : allocations) {
      if (!staged.count(a->buffer.get())) {
        kept.push_back(a->buffer);
        continue;
      }
      int64_t size = a->buffer->elementCount();
      slots[a->buffer.get()] = {makeBuffer(a->buffer->name, a->buffer->dtype, {stages * size}, BufferNode::Scope::Shared), size};
      slotBuffers.push_back(slots[a->buffer.get()].buffer);
    }
    for (auto b : staged)
      TESSEL_CHECK(slots.count(b), "double_buffer {}: the copy's buffer '{}' is not allocated in the loop '{}' it is double-buffered at",
                   firstStage, b->name, f->var.name());
    // Two stages whose second slot does not fit the shared memory left: registers hold the
    // next chunk instead (prefetchDoubleBuffers), which needs no second slot. Deeper pipelines
    // have no such way out: the kernel's verification names the limit.
    int64_t extra = 0;
    for (const auto& [buffer, slot] : slots) extra += (stages - 1) * slot.size * buffer->dtype.storageBytes();
    if (stages == 2 && extra > spareSharedBytes_) return visited;

    const Expr end = f->min + f->extent;
    auto slotOf = [&](const Expr& iteration) { return floormod(iteration - f->min, Expr(int64_t(stages))); };
    auto copiesOf = [&](const Expr& iteration) {
      Stmt c = substitute(makeBlock(copies), {{f->var.node(), iteration}});
      return ToSlot(slots, slotOf(iteration)).mutate(c);
    };
    std::vector<Stmt> prologue;
    for (int j = 0; j + 1 < stages; ++j) {
      Expr iteration = f->min + Expr(int64_t(j));
      prologue.push_back(makeIf(iteration < end, copiesOf(iteration)));
      prologue.push_back(asyncCommit());
    }
    Expr ahead = f->var + Expr(int64_t(stages - 1));
    std::vector<Stmt> loopBody = {asyncWait(stages - 2), gpuBarrier(), makeIf(ahead < end, copiesOf(ahead)), asyncCommit(),
                                  ToSlot(slots, slotOf(f->var)).mutate(makeBlock(rest))};
    Stmt newBody = makeBlock(loopBody);
    for (auto b = kept.rbegin(); b != kept.rend(); ++b) newBody = makeAllocate(*b, newBody);
    prologue.push_back(makeFor(f->var, f->min, f->extent, f->forKind, newBody));
    prologue.push_back(gpuBarrier());
    Stmt result = makeBlock(prologue);
    for (auto b = slotBuffers.rbegin(); b != slotBuffers.rend(); ++b) result = makeAllocate(*b, result);
    return result;
  }

 private:
  std::set<const BufferNode*> written_;
  int64_t spareSharedBytes_;
};

}  // namespace

Stmt pipelineAsyncCopies(const Stmt& s, int64_t maxSharedBytes) {
  Stmt pipelined = Pipeliner(storedBuffers(s), maxSharedBytes - gpuLaunchOf(s).sharedBytes).mutate(s);
  return prefetchDoubleBuffers(pipelined);  // the copies left to registers; drops the pragmas
}

std::optional<AsyncCopyForm> asyncCopyFormOf(const StoreNode* store) {
  AsyncCopyForm form;
  Expr value = store->value;
  if (value.kind() == ExprKind::Select || value.kind() == ExprKind::IfThenElse) {
    // A guarded load with zero otherwise: what the copy fills in for a source of 0 bytes.
    auto s = static_cast<const SelectNode*>(value.get());
    Expr zero = s->falseValue;
    if (auto b = zero.as<BroadcastNode>()) zero = b->value;
    bool isZero = (zero.as<FloatImmNode>() && zero.as<FloatImmNode>()->value == 0.0) || (zero.as<IntImmNode>() && zero.as<IntImmNode>()->value == 0);
    if (s->condition.type().lanes != 1 || !isZero) return std::nullopt;
    form.condition = s->condition;
    value = s->trueValue;
  }
  form.source = value.as<LoadNode>();
  form.elementBytes = store->buffer->dtype.storageBytes();
  auto copyable = [](int64_t bytes) { return bytes == 4 || bytes == 8 || bytes == 16; };
  const int lanes = store->index.type().lanes;
  if (!form.source || form.source->buffer->scope != BufferNode::Scope::Global || !(form.source->buffer->dtype == store->buffer->dtype) ||
      form.source->index.type().lanes != lanes || !copyable(form.elementBytes))
    return std::nullopt;
  // Both addresses dense and aligned to the whole copy (rows padded to an odd stride are not).
  auto alignedRamp = [&](const Expr& index) {
    auto r = index.as<RampNode>();
    return r && isConstInt(r->stride, 1) && knownDivisor(r->base) % lanes == 0;
  };
  form.whole = lanes == 1 || (copyable(int64_t(lanes) * form.elementBytes) && alignedRamp(store->index) && alignedRamp(form.source->index));
  return form;
}

bool isAsyncCopy(const Stmt& s) {
  auto p = s.as<PragmaNode>();
  return p && p->key == kAsyncCopyPragma;
}

}  // namespace tessel::passes
