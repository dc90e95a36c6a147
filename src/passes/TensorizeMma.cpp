#include "passes/TensorizeMma.h"

#include <optional>
#include <vector>

#include "ir/Equality.h"
#include "ir/Mutator.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "schedule/Steps.h"
#include "support/Error.h"

namespace tessel::passes {

using namespace ir;

namespace {

/// The intrinsic's fixed shape (PTX ISA, mma.m16n8k8): a warp of 8 x 4 lanes, 8 reduction steps.
constexpr int64_t kWarpLanes = 32, kLaneColumns = 4, kWarpRowGroups = 8, kReductionStep = 8;

struct NestLoop {
  Var var;
  int64_t extent;
};

/// `e` with `var` replaced by `value`, simplified.
Expr at(const Expr& e, const VarNode* var, int64_t value) { return simplify(substitute(e, VarMap{{var, Expr(value)}})); }

/// a - b when it simplifies to a constant.
std::optional<int64_t> constantDifference(const Expr& a, const Expr& b) {
  Expr difference = simplify(a - b);
  const int64_t* value = asConstInt(difference);
  return value ? std::optional<int64_t>(*value) : std::nullopt;
}

/// The constant c with e(var = v) - e(var = 0) == c * v for every v below `extent`, if there is one.
std::optional<int64_t> strideAlong(const Expr& e, const VarNode* var, int64_t extent) {
  Expr origin = at(e, var, 0);
  std::optional<int64_t> stride;
  for (int64_t v = 1; v < extent; ++v) {
    std::optional<int64_t> step = constantDifference(at(e, var, v), origin);
    if (!step || *step % v != 0 || (stride && *step != *stride * v)) return std::nullopt;
    stride = *step / v;
  }
  return stride.value_or(0);
}

class Tensorizer : public IRMutator {
 protected:
  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    bool lanes = n->forKind == ForKind::ThreadIdxX;
    if (lanes) laneLoops_.push_back(n);
    Stmt result = IRMutator::visitFor(s, n);
    if (lanes) laneLoops_.pop_back();
    return result;
  }
  Stmt visitIf(const Stmt& s, const IfThenElseNode* n) override {
    ++guards_;
    Stmt result = IRMutator::visitIf(s, n);
    --guards_;
    return result;
  }
  Stmt visitPragma(const Stmt& s, const PragmaNode* n) override {
    if (n->key != schedule::kTensorizePragma) return IRMutator::visitPragma(s, n);
    return rewrite(parseWarpMmaIntrinsic(n->value), n->body);
  }

 private:
  Stmt rewrite(WarpMmaKind kind, const Stmt& nest) {
    const char* name = warpMmaIntrinsicName(kind);
    // The loops down to the one statement; loops of one iteration are that iteration.
    std::vector<NestLoop> loops;
    VarMap single;
    Stmt body = nest;
    while (true) {
      if (auto f = body.as<ForNode>()) {
        const int64_t* extent = asConstInt(f->extent);
        TESSEL_CHECK(extent && isConstInt(f->min, 0), "tensorize {}: the loop '{}' has no constant range", name, f->var.name());
        TESSEL_CHECK(f->forKind == ForKind::Serial || f->forKind == ForKind::Unrolled, "tensorize {}: the loop '{}' under it is {}", name,
                     f->var.name(), forKindName(f->forKind));
        if (*extent == 1)
          single[f->var.node()] = Expr(int64_t(0));
        else
          loops.push_back({f->var, *extent});
        body = f->body;
      } else if (auto p = body.as<PragmaNode>()) {
        body = p->body;
      } else {
        break;
      }
    }
    auto store = body.as<StoreNode>();
    TESSEL_CHECK(store, "tensorize {}: the tensorized loops hold more than one statement, or a guard", name);
    const std::string& acc = store->buffer->name;
    TESSEL_CHECK(loops.size() == 3, "tensorize {} of '{}': {} loops of more than one iteration under it, not 3 (the reduction, rows, columns)",
                 name, acc, loops.size());
    TESSEL_CHECK(!laneLoops_.empty(), "tensorize {} of '{}': the product is not under a threadIdx.x loop (the warp's lanes)", name, acc);
    const ForNode* laneLoop = laneLoops_.back();
    TESSEL_CHECK(isConstInt(laneLoop->extent, kWarpLanes), "tensorize {} of '{}': threadIdx.x runs {} lanes, not a warp of {}", name,
                 acc, toString(laneLoop->extent), kWarpLanes);
    TESSEL_CHECK(guards_ == 0, "tensorize {} of '{}': the product is guarded, so some lanes of a warp could skip the instruction", name,
                 acc);

    // acc[i] = acc[i] + x * y, fp32 throughout, acc local, x and y in shared memory.
    auto sum = store->value.kind() == ExprKind::Add ? static_cast<const BinaryNode*>(store->value.get()) : nullptr;
    TESSEL_CHECK(sum, "tensorize {} of '{}': the statement is not an accumulation", name, acc);
    Expr previous = sum->a, product = sum->b;
    auto isOwnLoad = [&](const Expr& e) {
      auto l = e.as<LoadNode>();
      return l && l->buffer.get() == store->buffer.get() && structurallyEqual(l->index, store->index);
    };
    if (!isOwnLoad(previous)) std::swap(previous, product);
    TESSEL_CHECK(isOwnLoad(previous) && product.kind() == ExprKind::Mul, "tensorize {} of '{}': the statement is not acc += x * y", name,
                 acc);
    auto mul = static_cast<const BinaryNode*>(product.get());
    auto x = mul->a.as<LoadNode>(), y = mul->b.as<LoadNode>();
    TESSEL_CHECK(x && y, "tensorize {} of '{}': the product's factors are not two loads", name, acc);
    TESSEL_CHECK(store->buffer->scope == BufferNode::Scope::Local, "tensorize {}: the accumulator '{}' is not a local buffer", name, acc);
    for (const auto* operand : {x, y})
      TESSEL_CHECK(operand->buffer->scope == BufferNode::Scope::Shared, "tensorize {} of '{}': the operand '{}' is not in shared memory",
                   name, acc, operand->buffer->name);
    for (DataType t : {store->buffer->dtype, x->buffer->dtype, y->buffer->dtype})
      TESSEL_CHECK(t == DataType::float32(), "tensorize {} of '{}': the operands are {}, not float32", name, acc, t.str());

    // Strides along the reduction (k) and the two spatial loops (p, q).
    const NestLoop &k = loops[0], &p = loops[1], &q = loops[2];
    auto strides = [&](const Expr& index, const char* what) {
      Expr e = simplify(substitute(index, single));
      std::array<int64_t, 3> s{};
      for (size_t d = 0; d < 3; ++d) {
        auto stride = strideAlong(e, loops[d].var.node(), loops[d].extent);
        TESSEL_CHECK(stride, "tensorize {} of '{}': the {} index is not linear in the loop '{}'", name, acc, what, loops[d].var.name());
        s[d] = *stride;
      }
      VarMap zero = single;
      for (const auto& l : loops) zero[l.var.node()] = Expr(int64_t(0));
      return std::make_pair(s, simplify(substitute(index, zero)));
    };
    auto [accStrides, accBase] = strides(store->index, "accumulator");
    auto [xStrides, xBase] = strides(x->index, "first operand's");
    auto [yStrides, yBase] = strides(y->index, "second operand's");
    TESSEL_CHECK(accStrides[0] == 0 && accStrides[1] != 0 && accStrides[2] != 0,
                 "tensorize {} of '{}': the outer loop '{}' is not the reduction or the sub-tile is not two-dimensional", name, acc,
                 k.var.name());
    // The rows operand is the one that does not move along q; the columns operand along p.
    bool xIsRows = xStrides[2] == 0;
    const LoadNode* a = xIsRows ? x : y;
    const LoadNode* b = xIsRows ? y : x;
    auto aStrides = xIsRows ? xStrides : yStrides, bStrides = xIsRows ? yStrides : xStrides;
    Expr aBase = xIsRows ? xBase : yBase, bBase = xIsRows ? yBase : xBase;
    TESSEL_CHECK(aStrides[2] == 0 && aStrides[1] != 0 && aStrides[0] != 0 && bStrides[1] == 0 && bStrides[2] != 0 && bStrides[0] != 0,
                 "tensorize {} of '{}': the operands do not read rows x reduction and reduction x columns", name, acc);
    TESSEL_CHECK(k.extent % kReductionStep == 0 && p.extent % 2 == 0 && q.extent % 2 == 0,
                 "tensorize {} of '{}': a sub-tile of {} x {} over {} steps; the instruction needs even sub-tiles and steps of {}", name,
                 acc, p.extent, q.extent, k.extent, kReductionStep);

    // Lane l = 4g + t holds either rows g * p.extent + [0, p.extent) and columns t * q.extent + ...
    // of the warp's tile (contiguous sub-tiles), or rows g + 8r and columns t + 4c (interleaved,
    // the fragments' own layout): what the instruction's fragments can be loaded for. Lane 4 (the
    // second row group) tells which; every lane must then agree.
    const VarNode* lane = laneLoop->var.node();
    auto moved = [&](const Expr& base, int64_t l) { return constantDifference(at(base, lane, l), at(base, lane, 0)); };
    std::optional<int64_t> secondGroup = moved(aBase, kLaneColumns);
    bool interleaved = secondGroup && aStrides[1] % kWarpRowGroups == 0 && bStrides[2] % kLaneColumns == 0 &&
                       *secondGroup * kWarpRowGroups == aStrides[1];
    for (int64_t l = 1; l < kWarpLanes; ++l) {
      int64_t g = l / kLaneColumns, t = l % kLaneColumns;
      std::optional<int64_t> da = moved(aBase, l), db = moved(bBase, l), dc = moved(accBase, l);
      bool holds = interleaved ? da && db && *da * kWarpRowGroups == g * aStrides[1] && *db * kLaneColumns == t * bStrides[2]
                               : da && db && *da == g * p.extent * aStrides[1] && *db == t * q.extent * bStrides[2];
      TESSEL_CHECK(holds && dc && *dc == 0,
                   "tensorize {} of '{}': lane {} holds neither the contiguous sub-tile of {} x {} outputs a warp of 8 x 4 threads gives "
                   "it nor the interleaved one (rows g + 8r, columns t + 4c)",
                   name, acc, l, p.extent, q.extent);
    }

    WarpMmaNode node;
    node.intrinsic = kind;
    node.accumulator = load(store->buffer, accBase);
    node.a = load(a->buffer, aBase);
    node.b = load(b->buffer, bBase);
    node.accumulatorRowStride = accStrides[1];
    node.accumulatorColumnStride = accStrides[2];
    node.aRowStride = aStrides[1];
    node.aReductionStride = aStrides[0];
    node.bReductionStride = bStrides[0];
    node.bColumnStride = bStrides[2];
    node.rows = p.extent;
    node.columns = q.extent;
    node.reduction = k.extent;
    node.interleavedLanes = interleaved;
    return makeWarpMma(node);
  }

  std::vector<const ForNode*> laneLoops_;
  int guards_ = 0;
};

}  // namespace

Stmt tensorizeWarpMma(const Stmt& s) { return Tensorizer().mutate(s); }

}  // namespace tessel::passes
