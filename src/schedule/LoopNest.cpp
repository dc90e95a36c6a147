#include "schedule/LoopNest.h"

#include <fmt/format.h>

#include <map>

#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "schedule/BoundInference.h"
#include "support/Error.h"

namespace tessel::schedule {

using namespace ir;

namespace {

ForKind forKindOf(Annotation a) {
  switch (a) {
    case Annotation::Parallel: return ForKind::Parallel;
    case Annotation::Vectorize: return ForKind::Vectorized;
    case Annotation::Unroll: return ForKind::Unrolled;
    case Annotation::BlockX: return ForKind::BlockIdxX;
    case Annotation::BlockY: return ForKind::BlockIdxY;
    case Annotation::BlockZ: return ForKind::BlockIdxZ;
    case Annotation::ThreadX: return ForKind::ThreadIdxX;
    case Annotation::ThreadY: return ForKind::ThreadIdxY;
    case Annotation::ThreadZ: return ForKind::ThreadIdxZ;
    // A virtual thread runs as a serial loop inside the real thread (TVM interleaves them for
    // instruction-level parallelism; the numbers are the same). The pragma keeps its extent
    // visible to the GPU verification, which limits it.
    case Annotation::VThread:
    case Annotation::None: return ForKind::Serial;
  }
  return ForKind::Serial;  // not reached: every annotation is handled above
}

std::string identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

class Builder {
 public:
  Builder(const State& s, BoundsResult b) : state(s), bounds(std::move(b)) {}

  LoopNestFunction build(const std::string& name) {
    LoopNestFunction f;
    f.name = name;
    const auto& dag = state.dag();
    for (auto& in : dag.inputNames()) f.args.push_back(globalBuffer(in));
    for (auto& out : dag.outputNames()) f.args.push_back(globalBuffer(out));
    f.numOutputs = int(dag.outputNames().size());
    // Intermediate root stages get whole-tensor buffers for the function's lifetime.
    std::vector<Buffer> rootBuffers;
    for (auto& s : state.stages()) {
      if (s.isPlaceholder() || s.attach != AttachKind::Root || state.isOutput(s.name())) continue;
      rootBuffers.push_back(localBuffer(s));
    }
    std::vector<Stmt> body;
    for (auto& s : state.stages())
      if (!s.isPlaceholder() && s.attach == AttachKind::Root) body.push_back(emitStage(s, false));
    Stmt result = makeBlock(body);
    for (auto it = rootBuffers.rbegin(); it != rootBuffers.rend(); ++it) result = makeAllocate(*it, result);
    f.body = result;
    return f;
  }

 private:
  Buffer globalBuffer(const std::string& name) {
    const auto& op = *state.stage(name).op;
    auto b = makeBuffer(identifier(name), op.dtype, op.shape, BufferNode::Scope::Global);
    buffers[name] = b;
    return b;
  }

  Buffer localBuffer(const Stage& s) {
    const auto& b = bounds.stages.at(s.name());
    std::vector<int64_t> shape(b.regionExtent.begin(), b.regionExtent.begin() + int64_t(s.op->axes.size()));
    std::vector<int64_t> strides(shape.size(), 1);
    for (int d = int(shape.size()) - 2; d >= 0; --d) {
      int64_t stride = strides[size_t(d + 1)] * shape[size_t(d + 1)];
      if (auto it = s.storageAlign.find(d); it != s.storageAlign.end()) {
        auto [factor, offset] = it->second;
        stride += ((offset - stride % factor) % factor + factor) % factor;
      }
      strides[size_t(d)] = stride;
    }
    auto scope = s.memoryScope == "shared" ? BufferNode::Scope::Shared : BufferNode::Scope::Local;
    auto buf = makeBuffer(identifier(s.name()), s.op->dtype, shape, scope, strides);
    buffers[s.name()] = buf;
    return buf;
  }

  /// The buffer-relative flat index of a tensor element.
  Expr flatIndex(const std::string& tensor, const std::vector<Expr>& indices) {
    const Buffer& buf = buffers.at(tensor);
    const Stage& s = state.stage(tensor);
    bool local = !s.isPlaceholder() && !state.isOutput(tensor) && s.attach == AttachKind::At;
    Expr flat(int64_t(0));
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr i = indices[d];
      if (local) {
        const auto& b = bounds.stages.at(tensor);
        // Every read of a strided region is on its lattice (inferBounds): the division is exact.
        i = i - b.regionMin[d];
        if (b.regionStride[d] > 1) i = floordiv(simplify(i, bounds.varRanges), Expr(b.regionStride[d]));
      }
      flat = flat + i * Expr(buf->strides[d]);
    }
    return simplify(flat, bounds.varRanges);
  }

  class ReadFlattener : public IRMutator {
   public:
    explicit ReadFlattener(Builder& b) : builder(b) {}
    Expr visitProducerLoad(const Expr&, const ProducerLoadNode* n) override {
      std::vector<Expr> idx;
      for (auto& i : n->indices) idx.push_back(mutate(i));
      return load(builder.buffers.at(n->producer), builder.flatIndex(n->producer, idx));
    }
    Builder& builder;
  };

  /// Whether a stage may compute past its spatial domain: a float reduction computed at a loop of
  /// another (its buffer holds its region) whose every read, none under a condition, is of
  /// another such stage, within that stage's region. The points past the domain read the staged
  /// copies' regions, which their buffers hold (bound inference sizes them for the loops, guards
  /// aside), and only the consumer's padded points read them back, which its own guard skips. A
  /// GEMM's accumulator over a ragged last tile (ViT's 197 tokens) then multiplies unguarded, as
  /// tensor-core instructions need. Floats only: garbage integers could trap in a division.
  bool mayComputePastDomain(const Stage& s) const {
    if (s.attach != AttachKind::At || state.isOutput(s.name()) || !s.op->dtype.isFloat() || !s.op->reduction()) return false;
    const auto& b = bounds.stages.at(s.name());
    // The axes whose values may leave the domain (a ragged last tile); none: nothing to relax.
    std::vector<const VarNode*> overrun;
    for (size_t r = 0; r < s.op->axes.size(); ++r) {
      Expr inside = simplify(b.rootValues[r] >= Expr(int64_t(0)) && b.rootValues[r] < Expr(s.op->shape[r]), bounds.varRanges);
      if (!isConstInt(inside, 1)) overrun.push_back(s.op->axes[r].var.node());
    }
    if (overrun.empty()) return false;
    struct Reads : IRVisitor {
      std::vector<const ProducerLoadNode*> loads;
      bool conditional = false;
      void visit(const Expr& e) override {
        if (auto l = e.as<ProducerLoadNode>()) loads.push_back(l);
        conditional = conditional || e.kind() == ExprKind::Select || e.kind() == ExprKind::IfThenElse;
        IRVisitor::visit(e);
      }
    } reads;
    reads.visit(b.body);
    // A read under a condition (padding, a reduction's own condition) may be bounded by it: the
    // region need not hold it.
    auto reduce = b.body.as<ReduceNode>();
    if (reads.conditional || (reduce && reduce->condition.defined())) return false;
    for (const ProducerLoadNode* load : reads.loads) {
      const Stage& producer = state.stage(load->producer);
      if (producer.isPlaceholder() || producer.attach != AttachKind::At || state.isOutput(load->producer)) return false;
      // A region as wide as the producer's shape is kept at [0, shape) (inferBounds): a read
      // past the domain along it would leave the buffer. Other regions hold every read.
      const auto& region = bounds.stages.at(load->producer).regionExtent;
      for (size_t d = 0; d < load->indices.size(); ++d)
        if (region[d] >= producer.op->shape[d])
          for (const VarNode* v : overrun)
            if (usesVar(load->indices[d], v)) return false;
    }
    return !reads.loads.empty();
  }

  /// Conditions that keep the stage's root values inside their domains (but where the stage may
  /// compute past its spatial domain), and every other iterator inside its extent, where bounds
  /// can't prove it.
  Expr guards(const Stage& s, bool includeReduce) {
    const auto& b = bounds.stages.at(s.name());
    Expr cond;
    auto add = [&](Expr c) {
      c = simplify(c, bounds.varRanges);
      if (isConstInt(c, 1)) return;
      cond = cond.defined() ? (cond && c) : c;
    };
    size_t spatial = s.op->axes.size();
    auto domain = [&](int r) {
      return size_t(r) >= spatial ? s.op->reduction()->axes[size_t(r) - spatial].extent : s.op->shape[size_t(r)];
    };
    bool pastDomain = mayComputePastDomain(s);
    for (int r = 0; r < s.rootCount; ++r) {
      if (size_t(r) >= spatial && !includeReduce) continue;
      if (size_t(r) < spatial && pastDomain) continue;
      const Expr& v = b.rootValues[size_t(r)];
      add(v >= Expr(int64_t(0)));
      add(v < Expr(domain(r)));
    }
    // Loops of a non-divisible split overrun their parent. Staying inside the tensor is not
    // enough when the parent is itself split or fused (iterations would repeat) or is a root
    // axis of an attached stage (the local buffer holds only the region): every iterator that
    // is not a loop must stay within its extent.
    auto values = iteratorValues(s, b.iteratorVars);
    for (int id = 0; id < int(values.size()); ++id) {
      const Iterator& it = s.iterator(id);
      if (s.leafPosition(id) >= 0 || (it.kind == IteratorKind::Reduce && !includeReduce)) continue;
      // The domain check above covers a root axis whose region is the whole dimension, unless
      // the stage may compute past its domain: that skipped it, and its buffer ends there too.
      if (id < s.rootCount && it.extent >= domain(id) && !pastDomain) continue;
      add(values[size_t(id)] < Expr(it.extent));
    }
    return cond;
  }

  Stmt guarded(Expr cond, Stmt body) { return cond.defined() ? makeIf(cond, body) : body; }

  Stmt computeStatement(const Stage& s) {
    const auto& b = bounds.stages.at(s.name());
    VarMap axisMap;
    size_t spatial = s.op->axes.size();
    for (size_t d = 0; d < spatial; ++d) axisMap[s.op->axes[d].var.node()] = b.rootValues[d];
    std::vector<Expr> outIndex(b.rootValues.begin(), b.rootValues.begin() + int64_t(spatial));
    Buffer buf = buffers.at(s.name());
    Expr index = flatIndex(s.name(), outIndex);
    ReadFlattener flatten(*this);
    if (auto r = b.body.as<ReduceNode>()) {
      for (size_t k = 0; k < r->axes.size(); ++k) axisMap[r->axes[k].var.node()] = b.rootValues[spatial + k];
      Expr source = flatten.mutate(substitute(r->source, axisMap));
      Expr update = reduceCombine(r->op, load(buf, index), source);
      Expr cond = guards(s, true);
      if (r->condition.defined()) {
        Expr c = flatten.mutate(substitute(r->condition, axisMap));
        cond = cond.defined() ? (cond && c) : c;
      }
      return guarded(cond, makeStore(buf, index, update));
    }
    Expr value = flatten.mutate(substitute(b.body, axisMap));
    return guarded(guards(s, false), makeStore(buf, index, value));
  }

  Stmt initStatement(const Stage& s) {
    auto r = bounds.stages.at(s.name()).body.as<ReduceNode>();
    const auto& b = bounds.stages.at(s.name());
    std::vector<Expr> outIndex(b.rootValues.begin(), b.rootValues.begin() + int64_t(s.op->axes.size()));
    Buffer buf = buffers.at(s.name());
    return guarded(guards(s, false), makeStore(buf, flatIndex(s.name(), outIndex), reduceIdentity(r->op, s.op->dtype)));
  }

  /// The loop of one leaf iterator; `serialize` turns a nested parallel loop serial.
  Stmt wrapLoop(const Stage& s, int leaf, Stmt body, bool serialize) {
    const auto& it = s.iterator(leaf);
    const auto& var = bounds.stages.at(s.name()).iteratorVars[size_t(leaf)];
    ForKind kind = forKindOf(it.annotation);
    if (kind == ForKind::Parallel && serialize) kind = ForKind::Serial;
    Stmt loop = makeFor(var, Expr(int64_t(0)), Expr(it.extent), kind, body);
    if (it.annotation == Annotation::VThread) loop = makePragma("virtual_thread", std::to_string(it.extent), loop);
    for (auto p = it.pragmas.rbegin(); p != it.pragmas.rend(); ++p) loop = makePragma(p->first, p->second, loop);
    return loop;
  }

  /// The loops of one stage, with the stages attached to them; `inParallel` when an enclosing
  /// loop is already parallel (nested parallel loops run serially).
  Stmt emitStage(const Stage& s, bool inParallel) {
    bool reduction = s.op->reduction() != nullptr;
    int firstReduce = -1;
    if (reduction)
      for (size_t p = 0; p < s.leaves.size() && firstReduce < 0; ++p)
        if (s.iterator(s.leaves[p]).kind == IteratorKind::Reduce) firstReduce = int(p);
    // Which loops are parallel, outermost first; only the first one runs in parallel.
    std::vector<bool> serialized(s.leaves.size(), false);
    int firstParallel = int(s.leaves.size());
    for (size_t p = 0; p < s.leaves.size(); ++p) {
      if (s.iterator(s.leaves[p]).annotation != Annotation::Parallel) continue;
      serialized[p] = inParallel || firstParallel < int(p);
      firstParallel = std::min(firstParallel, int(p));
    }
    std::function<Stmt(size_t)> nest = [&](size_t p) -> Stmt {
      if (p == s.leaves.size()) return computeStatement(s);
      int leaf = s.leaves[p];
      bool nowParallel = inParallel || firstParallel <= int(p);
      std::vector<Stmt> body;
      std::vector<Buffer> allocations;
      for (auto& other : state.stages()) {
        if (other.attach != AttachKind::At || other.attachStage != s.name() || other.attachIterator != leaf) continue;
        allocations.push_back(localBuffer(other));
        Stmt copy = emitStage(other, nowParallel);
        if (other.doubleBuffer && other.bufferStages != 2)
          copy = makePragma(kBufferStagesPragma, std::to_string(other.bufferStages), copy);
        body.push_back(other.doubleBuffer ? makePragma(kDoubleBufferPragma, other.name(), copy) : copy);
      }
      body.push_back(nest(p + 1));
      Stmt inner = makeBlock(body);
      for (auto it = allocations.rbegin(); it != allocations.rend(); ++it) inner = makeAllocate(*it, inner);
      Stmt loop = wrapLoop(s, leaf, inner, serialized[p]);
      if (int(p) == firstReduce) loop = makeBlock({initNest(s, p + 1), loop});
      return loop;
    };
    Stmt result = nest(0);
    if (reduction && firstReduce < 0) result = makeBlock({initNest(s, s.leaves.size()), result});
    return result;
  }

  /// The identity stores for a reduction: loops over the spatial leaves inside the first
  /// reduction loop, placed just before it.
  Stmt initNest(const Stage& s, size_t from) {
    Stmt body = initStatement(s);
    for (size_t p = s.leaves.size(); p-- > from;) {
      int leaf = s.leaves[p];
      const auto& it = s.iterator(leaf);
      if (it.kind == IteratorKind::Reduce) continue;
      ForKind kind = forKindOf(it.annotation);
      if (kind == ForKind::Parallel) kind = ForKind::Serial;
      body = makeFor(bounds.stages.at(s.name()).iteratorVars[size_t(leaf)], Expr(int64_t(0)), Expr(it.extent), kind, body);
    }
    return body;
  }

  const State& state;
  BoundsResult bounds;
  std::map<std::string, Buffer> buffers;
};

}  // namespace

LoopNestFunction buildLoopNest(const State& input, const std::string& name) {
  State state = input;
  auto bounds = inferBounds(state);
  for (auto& s : state.stages())
    for (int leaf : s.leaves)
      if (s.iterator(leaf).annotation == Annotation::Vectorize)
        TESSEL_CHECK(s.iterator(leaf).exactExtent, "cannot vectorize {}.{}: its extent varies with the enclosing loops",
                     s.name(), s.iterator(leaf).name);
  Builder builder(state, std::move(bounds));
  return builder.build(name);
}

}  // namespace tessel::schedule
