#include "schedule/BoundInference.h"

#include <numeric>
#include <set>

#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "schedule/InlinedBodies.h"
#include "schedule/State.h"
#include "support/Error.h"

namespace tessel::schedule {

using namespace ir;

namespace {

struct Range {
  Expr lo, hi;
  bool ok() const { return lo.defined(); }
};

/// Symbolic interval of e when the variables in `relaxed` range over their intervals and all
/// others stay fixed. Undefined when it cannot be bounded.
Range relax(const Expr& e, const VarBounds& relaxed) {
  bool fixed = !usesAnyVar(e, [&](const VarNode* v) { return relaxed.count(v) > 0; });
  auto point = [&]() -> Range { return fixed ? Range{e, e} : Range{}; };
  // Nothing relaxed inside: one point. Taking it apart would lose that (floordiv of a point
  // gives two separate bounds, and floormod of those widens to the whole modulus: the fused
  // loop of a tile would make its attached stage compute everything).
  if (fixed) return {e, e};
  switch (e.kind()) {
    case ExprKind::IntImm: return {e, e};
    case ExprKind::Var: {
      auto it = relaxed.find(e.as<VarNode>());
      if (it == relaxed.end()) return {e, e};
      if (!it->second.bounded()) return {};
      return {Expr(it->second.min), Expr(it->second.max)};
    }
    case ExprKind::Add:
    case ExprKind::Sub:
    case ExprKind::Mul:
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod:
    case ExprKind::Min:
    case ExprKind::Max: {
      auto n = static_cast<const BinaryNode*>(e.get());
      Range a = relax(n->a, relaxed), b = relax(n->b, relaxed);
      if (!a.ok() || !b.ok()) return {};
      switch (e.kind()) {
        case ExprKind::Add: return {a.lo + b.lo, a.hi + b.hi};
        case ExprKind::Sub: return {a.lo - b.hi, a.hi - b.lo};
        case ExprKind::Mul: {
          auto c = asConstInt(b.lo);
          if (c && b.lo.sameAs(b.hi)) return *c >= 0 ? Range{a.lo * b.lo, a.hi * b.lo} : Range{a.hi * b.lo, a.lo * b.lo};
          if (a.lo.sameAs(a.hi) && b.lo.sameAs(b.hi)) return {e, e};
          return {};
        }
        case ExprKind::FloorDiv: {
          auto c = asConstInt(n->b);
          if (!c || *c <= 0) return point();
          return {floordiv(a.lo, n->b), floordiv(a.hi, n->b)};
        }
        case ExprKind::FloorMod: {
          auto c = asConstInt(n->b);
          if (a.lo.sameAs(a.hi)) return {e, e};
          if (!c || *c <= 0) return {};
          return {Expr(int64_t(0)), Expr(*c - 1)};
        }
        case ExprKind::Min: return {min(a.lo, b.lo), min(a.hi, b.hi)};
        default: return {max(a.lo, b.lo), max(a.hi, b.hi)};
      }
    }
    default: return point();
  }
}

/// The step common to a stage's reads along one axis: the gcd of every relaxed loop's
/// coefficient in every read's index and of the differences between the reads' starting points
/// (their indices with the relaxed loops at 0). 1 where a read is not a sum of relaxed loops
/// times constants (a division, a product of loops) or two reads start a non-constant distance
/// apart.
class StrideOfReads {
 public:
  void add(const Expr& index, const VarBounds& relaxed) {
    // A step of 1 stays 1: most reads (a window's loops) end here, before any simplification.
    if (unknown_ || gcd_ == 1) return;
    VarMap zero;
    for (const auto& [atom, coefficient] : linearSum(index).terms) {
      bool moves = usesAnyVar(atom, [&](const VarNode* v) { return relaxed.count(v) > 0; });
      if (!moves) continue;
      auto v = atom.as<VarNode>();
      if (!v) {
        unknown_ = true;
        return;
      }
      gcd_ = std::gcd(gcd_, coefficient < 0 ? -coefficient : coefficient);
      zero[v] = Expr(int64_t(0));
    }
    if (gcd_ == 1) return;
    Expr start = simplify(substitute(index, zero));
    if (!firstStart_.defined()) {
      firstStart_ = start;
      return;
    }
    Expr difference = simplify(start - firstStart_);  // kept: asConstInt points into it
    const int64_t* distance = asConstInt(difference);
    if (!distance) {
      unknown_ = true;
      return;
    }
    gcd_ = std::gcd(gcd_, *distance < 0 ? -*distance : *distance);
  }
  int64_t stride() const { return unknown_ || gcd_ == 0 ? 1 : gcd_; }

 private:
  int64_t gcd_ = 0;
  Expr firstStart_;
  bool unknown_ = false;
};

}  // namespace

namespace {

/// iteratorValues before simplification: each value built from its children's.
std::vector<Expr> unsimplifiedIteratorValues(const Stage& stage, const std::vector<Var>& vars) {
  std::vector<Expr> value(stage.iterators.size());
  for (int leaf : stage.leaves) value[size_t(leaf)] = vars[size_t(leaf)];
  for (auto it = stage.relations.rbegin(); it != stage.relations.rend(); ++it) {
    if (it->kind == IterRelation::Kind::Split) {
      int64_t innerExtent = stage.iterator(it->inner).extent;
      value[size_t(it->parent)] = value[size_t(it->outer)] * Expr(innerExtent) + value[size_t(it->inner)];
    } else {
      int64_t innerExtent = stage.iterator(it->inner).extent;
      value[size_t(it->outer)] = floordiv(value[size_t(it->fused)], Expr(innerExtent));
      value[size_t(it->inner)] = floormod(value[size_t(it->fused)], Expr(innerExtent));
    }
  }
  return value;
}

}  // namespace

std::vector<Expr> iteratorValues(const Stage& stage, const std::vector<Var>& vars) {
  auto value = unsimplifiedIteratorValues(stage, vars);
  for (auto& v : value) v = simplify(v);
  return value;
}

std::vector<Expr> rootAxisValues(const Stage& stage, const std::vector<Var>& vars) {
  // Only the roots are simplified: a tiled stage has several times as many iterators.
  auto value = unsimplifiedIteratorValues(stage, vars);
  value.resize(size_t(stage.rootCount));
  for (auto& v : value) v = simplify(v);
  return value;
}

namespace {

void propagateExtents(Stage& stage) {
  for (auto& r : stage.relations) {
    if (r.kind == IterRelation::Kind::Split) {
      int64_t parent = stage.iterator(r.parent).extent;
      // A factor above the parent's extent (a sampled tile of a small axis) runs the parent's
      // extent, not `factor` guarded iterations of which all but `parent` do nothing.
      int64_t inner = r.factor > 0 ? std::min(r.factor, parent) : (parent + r.nparts - 1) / r.nparts;
      int64_t outer = r.factor > 0 ? (parent + r.factor - 1) / r.factor : r.nparts;
      stage.iterator(r.inner).extent = inner;
      stage.iterator(r.outer).extent = outer;
      bool exact = stage.iterator(r.parent).exactExtent;
      stage.iterator(r.inner).exactExtent = exact;
      stage.iterator(r.outer).exactExtent = exact;
    } else {
      // Saturated: a list of absurd splits is refused after inference (State's iteration
      // check), which must not overflow before it gets there.
      __int128 fused = __int128(stage.iterator(r.outer).extent) * stage.iterator(r.inner).extent;
      stage.iterator(r.fused).extent = int64_t(std::min<__int128>(fused, __int128(1) << 62));
      stage.iterator(r.fused).exactExtent = stage.iterator(r.outer).exactExtent && stage.iterator(r.inner).exactExtent;
    }
  }
}

}  // namespace

void assignWholeShapeExtents(Stage& stage) {
  const auto& op = *stage.op;
  size_t spatial = op.axes.size();
  for (int r = 0; r < stage.rootCount; ++r) {
    size_t d = size_t(r);
    stage.iterator(r).extent = d < spatial ? op.shape[d] : op.reduction()->axes[d - spatial].extent;
    stage.iterator(r).exactExtent = true;
  }
  propagateExtents(stage);
}

Expr inlinedBody(const State& state, const std::string& stageName) {
  const Stage& stage = state.stage(stageName);
  TESSEL_CHECK(!stage.isPlaceholder(), "stage '{}' is a placeholder: it has no body", stageName);
  return inlinedBodyOf(state, stage);
}

BoundsResult inferBounds(State& state, BoundsDetail detail) {
  BoundsResult result;
  auto& stages = state.stages();
  // Loop variables for every iterator, and inlined bodies.
  InlinedBodies inlined = inlinedBodies(state);
  for (auto& s : stages) {
    StageBounds b;
    for (auto& it : s.iterators) {
      std::string name = it.name;
      b.iteratorVars.emplace_back(name);
    }
    if (!s.isPlaceholder()) b.body = inlined.bodies.at(s.name());
    result.stages[s.name()] = std::move(b);
  }
  // Which stages read which, after inlining.
  std::map<std::string, std::vector<std::string>> consumersOf;
  std::map<std::string, std::vector<std::vector<Expr>>> readsBy;  // key: producer + "\n" + consumer
  for (auto& s : stages) {
    if (s.isPlaceholder() || s.attach == AttachKind::Inline) continue;
    for (auto& a : inlined.reads.at(s.name())) {
      auto& list = consumersOf[a.producer];
      if (std::find(list.begin(), list.end(), s.name()) == list.end()) list.push_back(s.name());
      readsBy[a.producer + "\n" + s.name()].push_back(a.indices);
    }
  }
  // With extents only, a stage's root values matter only where an attached stage's region
  // is read from them.
  std::set<std::string> readsAnAttachedStage;
  for (auto& s : stages)
    if (s.attach == AttachKind::At)
      for (auto& consumer : consumersOf[s.name()]) readsAnAttachedStage.insert(consumer);
  // The variables fixed at each stage's attach point (its scope).
  std::map<std::string, std::set<const VarNode*>> scope;
  // Loops bound to threadIdx: a stage in shared memory is one buffer for the whole block, so its
  // region is relaxed over them (TVM's rule: a storage scope relaxes the thread ranks it is
  // shared by). Its threads then fill it together, each computing its own part.
  std::set<const VarNode*> threadVars;
  for (auto& st : stages)
    for (int leaf : st.leaves) {
      Annotation a = st.iterator(leaf).annotation;
      if (a == Annotation::ThreadX || a == Annotation::ThreadY || a == Annotation::ThreadZ)
        threadVars.insert(result.stages[st.name()].iteratorVars[size_t(leaf)].node());
    }

  for (int si = int(stages.size()) - 1; si >= 0; --si) {
    Stage& s = stages[size_t(si)];
    StageBounds& b = result.stages[s.name()];
    const auto& op = *s.op;
    size_t spatial = op.axes.size();
    b.regionMin.assign(size_t(s.rootCount), Expr(int64_t(0)));
    b.regionExtent.assign(size_t(s.rootCount), 0);
    b.regionExact.assign(size_t(s.rootCount), true);
    b.regionStride.assign(size_t(s.rootCount), 1);
    for (size_t d = 0; d < spatial; ++d) b.regionExtent[d] = op.shape[d];
    if (auto r = op.reduction())
      for (size_t k = 0; k < r->axes.size(); ++k) b.regionExtent[spatial + k] = r->axes[k].extent;

    if (s.attach == AttachKind::At) {
      const Stage& target = state.stage(s.attachStage);
      int position = target.leafPosition(s.attachIterator);
      TESSEL_ICHECK(position >= 0);
      std::set<const VarNode*> fixed = scope[target.name()];
      auto& targetVars = result.stages[target.name()].iteratorVars;
      for (int p = 0; p <= position; ++p) fixed.insert(targetVars[size_t(target.leaves[size_t(p)])].node());
      if (s.memoryScope == "shared")
        for (const VarNode* v : threadVars) fixed.erase(v);
      scope[s.name()] = fixed;
      // Consumers must all live inside the attach loop.
      for (auto& consumerName : consumersOf[s.name()]) {
        bool inside = false;
        for (std::string walk = consumerName;;) {
          const Stage& w = state.stage(walk);
          if (walk == target.name()) {
            inside = true;
            break;
          }
          if (w.attach != AttachKind::At) break;
          if (w.attachStage == target.name()) {
            inside = target.leafPosition(w.attachIterator) >= position;
            break;
          }
          walk = w.attachStage;
        }
        TESSEL_CHECK(inside, "stage '{}' is computed at {}.{}, but its consumer '{}' runs outside that loop", s.name(),
                     target.name(), target.iterator(s.attachIterator).name, consumerName);
      }
      VarBounds relaxed;
      for (auto& [v, range] : result.varRanges)
        if (!fixed.count(v)) relaxed[v] = range;
      std::vector<Range> region(spatial);
      std::vector<StrideOfReads> strides(spatial);
      bool failed = false;
      for (auto& consumerName : consumersOf[s.name()]) {
        const Stage& c = state.stage(consumerName);
        auto& cb = result.stages[consumerName];
        VarMap rootMap;
        std::vector<Var> rootVars;
        for (auto& a : c.op->axes) rootVars.push_back(a.var);
        if (auto r = c.op->reduction())
          for (auto& a : r->axes) rootVars.push_back(a.var);
        for (size_t k = 0; k < rootVars.size(); ++k) rootMap[rootVars[k].node()] = cb.rootValues[k];
        for (auto& indices : readsBy[s.name() + "\n" + consumerName]) {
          for (size_t d = 0; d < spatial; ++d) {
            Expr index = simplify(substitute(indices[d], rootMap));
            // Shared copies keep their windows (stride 1): a block's threads fill them with wide
            // contiguous copies, which a gather along the axis would break.
            if (s.memoryScope != "shared") strides[d].add(index, relaxed);
            Range r = relax(index, relaxed);
            if (!r.ok()) {
              failed = true;
              continue;
            }
            if (!region[d].ok()) {
              region[d] = r;
            } else {
              region[d] = {simplify(min(region[d].lo, r.lo), result.varRanges), simplify(max(region[d].hi, r.hi), result.varRanges)};
            }
          }
        }
      }
      for (size_t d = 0; d < spatial && !failed; ++d) {
        if (!region[d].ok()) continue;
        Expr lo = simplify(region[d].lo, result.varRanges);
        Expr extent = simplify(region[d].hi - region[d].lo + Expr(int64_t(1)), result.varRanges);
        int64_t ext;
        bool exact = true;
        if (auto c = asConstInt(extent)) {
          ext = *c;
        } else {
          auto bound = constBounds(extent, result.varRanges);
          if (!bound.boundedAbove()) continue;
          ext = bound.max;
          exact = false;
        }
        if (ext >= op.shape[d]) continue;  // the whole dimension: keep [0, shape)
        int64_t stride = exact ? strides[d].stride() : 1;
        b.regionMin[d] = lo;
        b.regionExtent[d] = stride > 1 && (ext - 1) % stride == 0 ? (ext - 1) / stride + 1 : std::max<int64_t>(ext, 1);
        b.regionStride[d] = stride > 1 && (ext - 1) % stride == 0 ? stride : 1;
        b.regionExact[d] = exact;
      }
    } else {
      scope[s.name()] = {};
    }
    // Root extents -> leaf extents, then this stage's leaf variable ranges.
    for (int r = 0; r < s.rootCount; ++r) {
      s.iterator(r).extent = b.regionExtent[size_t(r)];
      s.iterator(r).exactExtent = b.regionExact[size_t(r)];
    }
    propagateExtents(s);
    for (int leaf : s.leaves)
      result.varRanges[b.iteratorVars[size_t(leaf)].node()] = Interval{0, s.iterator(leaf).extent - 1};
    b.rootValues.clear();
    if (detail == BoundsDetail::Extents && !readsAnAttachedStage.count(s.name())) continue;
    // Simplified once, with the region's start.
    auto values = unsimplifiedIteratorValues(s, b.iteratorVars);
    for (int r = 0; r < s.rootCount; ++r)
      b.rootValues.push_back(simplify(b.regionMin[size_t(r)] + Expr(b.regionStride[size_t(r)]) * values[size_t(r)]));
  }
  return result;
}

}  // namespace tessel::schedule
