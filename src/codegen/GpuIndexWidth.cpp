#include "codegen/GpuIndexWidth.h"

#include <cstdint>
#include <limits>

#include "ir/Bounds.h"
#include "ir/Mutator.h"

namespace tessel::codegen {

using namespace ir;

namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

bool fitsInt32(const Interval& i) { return i.min >= kInt32Min && i.max <= kInt32Max; }

/// Walks the kernel with the range of every loop variable in scope; `fits` turns false at the
/// first buffer or 64-bit value that int32 cannot hold.
class IndexRangeCheck {
 public:
  bool fits = true;

  void buffer(const Buffer& b) {
    if (b->elementCount() > kInt32Max) fits = false;
  }

  void expr(const Expr& e) {
    if (!fits || !e.defined()) return;
    // Every node, not only whole indices: (i * 3000000) / 1000 overflows int32 inside.
    if (e.type() == DataType::int64() && !fitsInt32(constBounds(e, bounds_))) {
      fits = false;
      return;
    }
    forEachChild(e, [&](const Expr& child) { expr(child); });
  }

  void stmt(const Stmt& s) {
    if (!fits || !s.defined()) return;
    switch (s.kind()) {
      case StmtKind::Block:
        for (const Stmt& x : s.as<BlockNode>()->stmts) stmt(x);
        return;
      case StmtKind::Store: {
        auto n = s.as<StoreNode>();
        buffer(n->buffer);
        expr(n->index);
        expr(n->value);
        return;
      }
      case StmtKind::IfThenElse: {
        auto n = s.as<IfThenElseNode>();
        expr(n->condition);
        stmt(n->thenCase);
        stmt(n->elseCase);
        return;
      }
      case StmtKind::Allocate:
        buffer(s.as<AllocateNode>()->buffer);
        stmt(s.as<AllocateNode>()->body);
        return;
      case StmtKind::Pragma: stmt(s.as<PragmaNode>()->body); return;
      case StmtKind::WarpMma: {
        auto n = s.as<WarpMmaNode>();
        expr(n->accumulator);
        expr(n->a);
        expr(n->b);
        return;
      }
      case StmtKind::For: {
        auto n = s.as<ForNode>();
        expr(n->min);
        expr(n->extent);
        Interval lo = constBounds(n->min, bounds_), extent = constBounds(n->extent, bounds_);
        // The loop's test computes min + extent, one past the last value.
        Interval end = constBounds(n->min + n->extent, bounds_);
        if (!fits || !lo.bounded() || !extent.boundedAbove() || !fitsInt32(end)) {
          fits = false;
          return;
        }
        bounds_[n->var.node()] = Interval{lo.min, lo.max + extent.max - 1};
        stmt(n->body);
        bounds_.erase(n->var.node());
        return;
      }
    }
  }

 private:
  VarBounds bounds_;
};

}  // namespace

int gpuIndexBits(const passes::LoweredFunction& kernel) {
  IndexRangeCheck check;
  for (const Buffer& b : kernel.args) check.buffer(b);
  check.stmt(kernel.body);
  return check.fits ? 32 : 64;
}

}  // namespace tessel::codegen
