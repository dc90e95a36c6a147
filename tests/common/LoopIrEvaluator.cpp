#include "common/LoopIrEvaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <set>

#include "common/LoopIrNodes.h"
#include "ir/Equality.h"
#include "ir/Mutator.h"
#include "support/Error.h"

namespace tessel::kernelcheck {

namespace loopir {

void failAccess(const Context& c, const char* problem, int bufferId, int64_t index) {
  const BufferState& b = c.buffers[bufferId];
  fail("loop IR evaluator, function '{}': {}: buffer '{}' index {} (of {} elements)", *c.function, problem, b.node->name, index,
       b.size);
}

void failArithmetic(const Context& c, const std::string& message) {
  fail("loop IR evaluator, function '{}': {}", *c.function, message);
}

float halfToFloat(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0) magnitude = std::ldexp(float(mantissa), -24);  // zero or subnormal
  else if (exponent == 31) magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else magnitude = std::ldexp(float(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

uint16_t floatToHalf(float f) {
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  float a = std::fabs(f);
  if (std::isnan(f)) return uint16_t(sign | 0x7e00);
  if (a >= 65520.0f) return uint16_t(sign | 0x7c00);  // rounds past the largest half: infinity
  // Round to nearest even at the half's precision: 2^-24 steps below 2^-14, 11 bits above.
  int exponent = a < std::ldexp(1.0f, -14) ? -14 : std::ilogb(a);
  float step = std::ldexp(1.0f, exponent - 10);
  auto units = uint32_t(std::nearbyint(a / step));  // exact: a / step < 2^12; the mode is to-nearest-even
  if (a < std::ldexp(1.0f, -14)) return uint16_t(sign | units);  // subnormal (or the smallest normal, by carry)
  if (units == 2048) {
    units = 1024;
    ++exponent;
  }
  return uint16_t(sign | uint32_t(exponent + 15) << 10 | (units - 1024));
}

namespace {

using namespace ir;

enum class Category { Int, Float, Double };

Category categoryOf(DataType t) {
  if (t.isFloat()) {
    TESSEL_CHECK(t.bits == 16 || t.bits == 32 || t.bits == 64, "loop IR evaluator: no float{} arithmetic", int(t.bits));
    return t.bits == 64 ? Category::Double : Category::Float;
  }
  TESSEL_CHECK(t.isBool() || (t.isIntegral() && !(t.isUInt() && t.bits == 64)), "loop IR evaluator: unsupported type {}", t.str());
  return Category::Int;
}

template <class T>
constexpr Category categoryOfValue() {
  if constexpr (std::is_same_v<T, int64_t>) return Category::Int;
  else if constexpr (std::is_same_v<T, float>) return Category::Float;
  else return Category::Double;
}

/// Calls f with a value of the C++ type that computes values of `t`.
template <class F>
auto withValueType(DataType t, F&& f) {
  switch (categoryOf(t)) {
    case Category::Int: return f(int64_t{});
    case Category::Float: return f(float{});
    default: return f(double{});
  }
}

IntType intTypeOf(DataType t) { return {t.isBool() ? 1 : int(t.bits), t.isUInt() || t.isBool()}; }

template <class Node, class T>
std::unique_ptr<Node> binaryNode(Ptr<T> a, Ptr<T> b) {
  auto n = std::make_unique<Node>();
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

class Compiler {
 public:
  explicit Compiler(const passes::LoweredFunction& f, Hoisted* outsideLoops) : function(f.name) {
    frames.push_back({outsideLoops, {}, {}});
    for (auto& b : f.args) {
      bufferId(b);
      inScope.insert(b.get());
    }
  }

  std::string function;
  std::vector<Buffer> buffers;  ///< by id: the arguments, then the allocations
  int slotCount = 0;

  StmtPtr stmt(const Stmt& s) {
    if (!s.defined()) return std::make_unique<Nothing>();
    switch (s.kind()) {
      case StmtKind::Block: {
        auto n = std::make_unique<Sequence>();
        for (auto& x : s.as<BlockNode>()->stmts) n->stmts.push_back(stmt(x));
        return n;
      }
      case StmtKind::Pragma: return stmt(s.as<PragmaNode>()->body);
      case StmtKind::IfThenElse: {
        auto x = s.as<IfThenElseNode>();
        auto n = std::make_unique<Branch>();
        n->condition = expr<int64_t>(x->condition, -1);
        n->thenCase = stmt(x->thenCase);
        if (x->elseCase.defined()) n->elseCase = stmt(x->elseCase);
        return n;
      }
      case StmtKind::For: {
        auto x = s.as<ForNode>();
        auto n = std::make_unique<Loop>();
        n->min = expr<int64_t>(x->min, -1);
        n->extent = expr<int64_t>(x->extent, -1);
        const VarNode* v = x->var.node();
        TESSEL_CHECK(!depthOfVar.count(v), "loop IR evaluator, function '{}': loop variable '{}' bound twice", function, v->name);
        auto [it, fresh] = slots.emplace(v, slotCount);
        if (fresh) ++slotCount;
        n->slot = it->second;
        frames.push_back({&n->hoisted, {}, {}});
        depthOfVar[v] = int(frames.size()) - 1;
        setSlotDepth(n->slot, int(frames.size()) - 1);
        n->body = stmt(x->body);
        depthOfVar.erase(v);
        frames.pop_back();
        return n;
      }
      case StmtKind::Allocate: {
        auto x = s.as<AllocateNode>();
        auto n = std::make_unique<Allocation>();
        n->buffer = bufferId(x->buffer);
        TESSEL_CHECK(inScope.insert(x->buffer.get()).second, "loop IR evaluator, function '{}': buffer '{}' allocated inside itself",
                     function, x->buffer->name);
        n->body = stmt(x->body);
        inScope.erase(x->buffer.get());
        return n;
      }
      case StmtKind::Store: return store(s.as<StoreNode>());
      case StmtKind::WarpMma:
        // A warp's collective instruction: the evaluator runs CPU nests, one thread at a time.
        fail("loop IR evaluator, function '{}': a tensor-core instruction ({}) runs on a GPU only", function,
             warpMmaIntrinsicName(s.as<WarpMmaNode>()->intrinsic));
    }
    fail("loop IR evaluator, function '{}': unknown statement kind {}", function, int(s.kind()));
  }

 private:
  std::map<const VarNode*, int> slots;
  std::map<const VarNode*, int> depthOfVar;  ///< the bound variables' frames: 1 for the outermost loop's

  struct Hoist {
    Expr expr;
    int lane;
    int slot;
  };
  /// One enclosing loop (or the function itself, frame 0): what is hoisted to it, by structure.
  struct Frame {
    Hoisted* hoisted;
    std::unordered_multimap<uint64_t, Hoist> byHash;
    std::map<std::vector<std::pair<int, int64_t>>, int> sums;  ///< compacted index terms -> slot
  };
  std::vector<Frame> frames;

  /// The depth of the innermost loop whose variable e (one lane of it) reads, if e is integer
  /// or boolean arithmetic that cannot fail (divisions by nonzero constants only); -1 otherwise.
  int hoistDepth(const Expr& e) {
    if (!(e.type().isIntegral() || e.type().isBool())) return -1;
    auto both = [&](const Expr& a, const Expr& b) {
      int x = hoistDepth(a), y = hoistDepth(b);
      return x < 0 || y < 0 ? -1 : std::max(x, y);
    };
    switch (e.kind()) {
      case ExprKind::IntImm: return 0;
      case ExprKind::Var: {
        auto it = depthOfVar.find(e.as<VarNode>());
        return it == depthOfVar.end() ? -1 : it->second;
      }
      case ExprKind::Ramp: return both(e.as<RampNode>()->base, e.as<RampNode>()->stride);
      case ExprKind::Broadcast: return hoistDepth(e.as<BroadcastNode>()->value);
      case ExprKind::Not: return hoistDepth(e.as<NotNode>()->a);
      default: break;
    }
    if (e.kind() < ExprKind::Add || e.kind() > ExprKind::Or) return -1;  // not a binary operator
    auto n = static_cast<const BinaryNode*>(e.get());
    if (e.kind() >= ExprKind::Div && e.kind() <= ExprKind::FloorMod) {
      auto c = asConstInt(n->b);
      if (!c || *c == 0 || *c == -1) return -1;
    }
    return both(n->a, n->b);
  }

  /// The slot that holds e (lane `lane` of it), computed once per iteration of the innermost
  /// loop it depends on.
  int hoist(const Expr& e, int lane, int depth) {
    Frame& frame = frames[size_t(depth)];
    uint64_t hash = structuralHash(e) * 131 + uint64_t(lane + 1);
    for (auto [it, end] = frame.byHash.equal_range(hash); it != end; ++it)
      if (it->second.lane == lane && structurallyEqual(it->second.expr, e)) return it->second.slot;
    Ptr<int64_t> value = node<int64_t>(e, lane);
    int slot = newSlot(depth, std::move(value));
    frames[size_t(depth)].byHash.emplace(hash, Hoist{e, lane, slot});
    return slot;
  }

  std::vector<int> slotDepth;  ///< the loop depth a slot's value changes at

  void setSlotDepth(int slot, int depth) {
    if (size_t(slot) >= slotDepth.size()) slotDepth.resize(size_t(slot) + 1);
    slotDepth[size_t(slot)] = depth;
  }

  int newSlot(int depth, Ptr<int64_t> value) {
    int slot = slotCount++;
    setSlotDepth(slot, depth);
    frames[size_t(depth)].hoisted->values.emplace_back(slot, std::move(value));
    return slot;
  }

  /// Folds the terms of an affine index that do not change in the innermost loop into one
  /// slot, computed outside it: the unrolled statements of a tile share it, differing in c0.
  void compact(Index& index) {
    const int innermost = int(frames.size()) - 1;
    std::vector<std::pair<int, int64_t>> outer;
    int depth = 0;
    for (int i = 0; i < index.terms; ++i) {
      int slot = index.slot[size_t(i)];
      if (slotDepth[size_t(slot)] < innermost) {
        outer.emplace_back(slot, index.coefficient[size_t(i)]);
        depth = std::max(depth, slotDepth[size_t(slot)]);
      }
    }
    if (outer.size() < 2) return;
    std::sort(outer.begin(), outer.end());
    auto [it, fresh] = frames[size_t(depth)].sums.emplace(outer, 0);
    if (fresh) {
      auto sum = std::make_unique<AffineValue>();
      for (auto [slot, coefficient] : outer) {
        sum->index.slot[size_t(sum->index.terms)] = slot;
        sum->index.coefficient[size_t(sum->index.terms++)] = coefficient;
      }
      it->second = newSlot(depth, std::move(sum));
    }
    Index compacted;
    compacted.c0 = index.c0;
    for (int i = 0; i < index.terms; ++i)
      if (slotDepth[size_t(index.slot[size_t(i)])] >= innermost) addTerm(compacted, index.slot[size_t(i)], index.coefficient[size_t(i)]);
    addTerm(compacted, it->second, 1);
    index = std::move(compacted);
  }

  std::map<const BufferNode*, int> bufferIds;
  std::set<const BufferNode*> inScope;

  int bufferId(const Buffer& b) {
    auto [it, fresh] = bufferIds.emplace(b.get(), int(buffers.size()));
    if (fresh) buffers.push_back(b);
    return it->second;
  }

  int usedBuffer(const Buffer& b) {
    TESSEL_CHECK(inScope.count(b.get()), "loop IR evaluator, function '{}': buffer '{}' used outside its allocation", function,
                 b->name);
    return bufferIds.at(b.get());
  }

  int slotOf(const VarNode* v) {
    TESSEL_CHECK(depthOfVar.count(v), "loop IR evaluator, function '{}': variable '{}' is not bound by an enclosing loop", function,
                 v->name);
    return slots.at(v);
  }

  [[noreturn]] void unknown(const Expr& e, const char* why) {
    fail("loop IR evaluator, function '{}': {} (expression kind {}, type {})", function, why, int(e.kind()), e.type().str());
  }

  /// Calls f with the element access type of `b`'s dtype and the value type it computes as.
  template <class F>
  void withElement(const Buffer& b, F&& f) {
    DataType t = b->dtype;
    if (t.isBool()) return f(BoolElement{}, int64_t{});
    if (t.isFloat() && t.bits == 16) return f(HalfElement{}, float{});
    if (t == DataType::float32()) return f(Element<float, float>{}, float{});
    if (t == DataType::float64()) return f(Element<double, double>{}, double{});
    if (t == DataType::int8()) return f(Element<int8_t, int64_t>{}, int64_t{});
    if (t == DataType::int16()) return f(Element<int16_t, int64_t>{}, int64_t{});
    if (t == DataType::int32()) return f(Element<int32_t, int64_t>{}, int64_t{});
    if (t == DataType::int64()) return f(Element<int64_t, int64_t>{}, int64_t{});
    if (t == DataType::uint8()) return f(Element<uint8_t, int64_t>{}, int64_t{});
    if (t == DataType(DataType::Code::UInt, 16)) return f(Element<uint16_t, int64_t>{}, int64_t{});
    if (t == DataType::uint32()) return f(Element<uint32_t, int64_t>{}, int64_t{});
    fail("loop IR evaluator, function '{}': buffer '{}' has unsupported dtype {}", function, b->name, t.str());
  }

  /// buf[i] = buf[i] + x (or x + buf[i]) with x not reading buf, on float32 buffers, where the
  /// lanes of i are distinct (a ramp of nonzero stride): then the lanes can update one by one.
  StmtPtr accumulate(const StoreNode* x) {
    if (x->buffer->dtype != DataType::float32() || x->value.kind() != ExprKind::Add) return nullptr;
    if (auto r = x->index.as<RampNode>()) {
      auto stride = asConstInt(r->stride);
      if (!stride || *stride == 0 || r->base.type().isVector()) return nullptr;
    } else if (x->index.type().isVector()) {
      return nullptr;
    }
    auto sum = static_cast<const BinaryNode*>(x->value.get());
    auto sameElement = [&](const Expr& e) {
      auto l = e.as<LoadNode>();
      return l && l->buffer.get() == x->buffer.get() && structurallyEqual(l->index, x->index);
    };
    const Expr* addend = sameElement(sum->a) ? &sum->b : sameElement(sum->b) ? &sum->a : nullptr;
    if (!addend || readsBuffer(*addend, x->buffer.get())) return nullptr;
    int id = usedBuffer(x->buffer);
    auto lane = [&](int l) {
      auto n = std::make_unique<Accumulate<Element<float, float>, float>>();
      n->buffer = id;
      n->index = index(x->index, l);
      n->addend = expr<float>(*addend, l);
      return n;
    };
    if (x->index.type().isScalar()) return lane(-1);
    auto lanes = std::make_unique<Sequence>();
    for (int l = 0; l < x->index.type().lanes; ++l) lanes->stmts.push_back(lane(l));
    return lanes;
  }

  StmtPtr store(const StoreNode* x) {
    if (StmtPtr fused = accumulate(x)) return fused;
    StmtPtr result;
    int id = usedBuffer(x->buffer);
    int lanes = x->index.type().lanes;
    TESSEL_CHECK(lanes <= kMaxVectorLanes && (lanes > 1 || x->value.type().isScalar()),
                 "loop IR evaluator, function '{}': a store of {} to buffer '{}' at a {}-lane index", function, x->value.type().str(),
                 x->buffer->name, lanes);
    withElement(x->buffer, [&](auto element, auto value) {
      using E = decltype(element);
      using R = decltype(value);
      TESSEL_CHECK(categoryOf(x->value.type()) == categoryOfValue<R>(), "loop IR evaluator, function '{}': a {} stored to {} buffer '{}'",
                   function, x->value.type().str(), x->buffer->dtype.str(), x->buffer->name);
      if (lanes == 1) {
        auto n = std::make_unique<Store<E, R>>();
        n->buffer = id;
        n->index = index(x->index, -1);
        n->value = expr<R>(x->value, -1);
        result = std::move(n);
        return;
      }
      auto n = std::make_unique<VectorStore<E, R>>();
      n->buffer = id;
      for (int l = 0; l < lanes; ++l) {
        n->index.push_back(index(x->index, l));
        n->value.push_back(expr<R>(x->value, l));
      }
      result = std::move(n);
    });
    return result;
  }

  // ---- expressions: `lane` picks one lane of a vector expression (-1: a scalar one) ---------

  bool addTerm(Index& out, int slot, int64_t coefficient) {
    for (int i = 0; i < out.terms; ++i)
      if (out.slot[size_t(i)] == slot) {
        out.coefficient[size_t(i)] = int64_t(uint64_t(out.coefficient[size_t(i)]) + uint64_t(coefficient));
        return true;
      }
    if (out.terms == Index::kMaxTerms) return false;
    out.slot[size_t(out.terms)] = slot;
    out.coefficient[size_t(out.terms)] = coefficient;
    ++out.terms;
    return true;
  }

  /// Adds scale * e to `out` if e is an affine int64 function of loop variables.
  bool affine(const Expr& e, int lane, int64_t scale, Index& out) {
    if (e.type().element() != DataType::int64()) return false;  // narrower integers wrap
    auto mul = [](int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); };
    switch (e.kind()) {
      case ExprKind::IntImm: out.c0 = int64_t(uint64_t(out.c0) + uint64_t(mul(scale, e.as<IntImmNode>()->value))); return true;
      case ExprKind::Var: return addTerm(out, slotOf(e.as<VarNode>()), scale);
      case ExprKind::Add:
      case ExprKind::Sub: {
        auto n = static_cast<const BinaryNode*>(e.get());
        return affine(n->a, lane, scale, out) && affine(n->b, lane, e.kind() == ExprKind::Sub ? mul(-1, scale) : scale, out);
      }
      case ExprKind::Mul: {
        auto n = static_cast<const BinaryNode*>(e.get());
        if (auto c = asConstInt(n->b)) return affine(n->a, lane, mul(scale, *c), out);
        if (auto c = asConstInt(n->a)) return affine(n->b, lane, mul(scale, *c), out);
        return false;
      }
      case ExprKind::Ramp: {
        auto n = e.as<RampNode>();
        if (lane < 0 || n->base.type().isVector()) return false;
        return affine(n->base, -1, scale, out) && affine(n->stride, -1, mul(scale, lane), out);
      }
      case ExprKind::Broadcast: return affine(e.as<BroadcastNode>()->value, -1, scale, out);
      default: {
        int depth = hoistDepth(e);
        return depth >= 0 && addTerm(out, hoist(e, e.type().isScalar() ? -1 : lane, depth), scale);
      }
    }
  }

  Index index(const Expr& e, int lane) {
    Index i;
    if (affine(e, lane, 1, i)) {
      compact(i);
    } else {
      TESSEL_CHECK(e.type().isIntegral(), "loop IR evaluator, function '{}': index of type {}", function, e.type().str());
      i = Index();
      i.general = expr<int64_t>(e, lane);
    }
    return i;
  }

 public:
  template <class T>
  Ptr<T> expr(const Expr& e, int lane) {
    if (!e.defined()) fail("loop IR evaluator, function '{}': an undefined expression", function);
    if (e.type().isScalar()) lane = -1;
    else if (lane < 0) unknown(e, "a vector value where a scalar is needed");
    if (categoryOf(e.type()) != categoryOfValue<T>()) unknown(e, "an operand of a different type than its use");
    if constexpr (std::is_same_v<T, int64_t>) {
      // Whatever does not depend on the innermost loop is computed outside it; a condition
      // is computed once per iteration of the innermost loop too, where unrolled statements
      // share it.
      if (e.kind() != ExprKind::IntImm && e.kind() != ExprKind::Var) {
        int depth = hoistDepth(e);
        if (depth >= 0 && (depth + 1 < int(frames.size()) || e.type().isBool()))
          return std::make_unique<SlotRead>(hoist(e, lane, depth));
        auto n = std::make_unique<AffineValue>();
        if (affine(e, lane, 1, n->index)) {
          compact(n->index);
          if (n->index.terms == 1 && n->index.c0 == 0 && n->index.coefficient[0] == 1)
            return std::make_unique<SlotRead>(n->index.slot[0]);
          return n;
        }
      }
    }
    return node<T>(e, lane);
  }

 private:
  template <class T>
  Ptr<T> loadOf(const LoadNode* x, int lane) {
    Ptr<T> result;
    int id = usedBuffer(x->buffer);
    withElement(x->buffer, [&](auto element, auto value) {
      using E = decltype(element);
      if constexpr (std::is_same_v<decltype(value), T>) {
        auto n = std::make_unique<Load<E, T>>();
        n->buffer = id;
        n->index = index(x->index, x->index.type().isScalar() ? -1 : lane);
        result = std::move(n);
      } else {
        fail("loop IR evaluator, function '{}': a {} load from {} buffer '{}'", function, x->type.str(), x->buffer->dtype.str(),
             x->buffer->name);
      }
    });
    return result;
  }

  template <class T>
  Ptr<T> castOf(const Expr& e, int lane) {
    const Expr& v = e.as<CastNode>()->value;
    return withValueType(v.type(), [&](auto from) -> Ptr<T> {
      auto n = std::make_unique<Convert<T, decltype(from)>>();
      n->value = expr<decltype(from)>(v, lane);
      n->intType = intTypeOf(e.type());
      n->toBool = e.type().isBool();
      n->toHalf = e.type().isFloat() && e.type().bits == 16;
      return n;
    });
  }

  template <class T>
  Ptr<T> callOf(const Expr& e, int lane) {
    auto x = e.as<CallNode>();
    size_t arity = x->op == Intrinsic::Pow ? 2 : 1;
    TESSEL_CHECK(x->args.size() == arity, "loop IR evaluator, function '{}': {} with {} arguments", function, intrinsicName(x->op),
                 x->args.size());
    if constexpr (std::is_same_v<T, int64_t>) {
      if (x->op != Intrinsic::Abs) unknown(e, "an integer math call other than abs");
      auto n = std::make_unique<IntAbs>();
      n->a = expr<int64_t>(x->args[0], lane);
      n->type = intTypeOf(e.type());
      return n;
    } else {
      auto n = std::make_unique<MathCall<T>>();
      n->op = x->op;
      n->a = expr<T>(x->args[0], lane);
      if (arity == 2) n->b = expr<T>(x->args[1], lane);
      return n;
    }
  }

  Ptr<int64_t> comparison(const Expr& e, int lane) {
    auto x = static_cast<const BinaryNode*>(e.get());
    return withValueType(x->a.type(), [&](auto operand) -> Ptr<int64_t> {
      using S = decltype(operand);
      Ptr<S> a = expr<S>(x->a, lane), b = expr<S>(x->b, lane);
      switch (e.kind()) {
        case ExprKind::EQ: return binaryNode<Compare<S, CmpOp::EQ>>(std::move(a), std::move(b));
        case ExprKind::NE: return binaryNode<Compare<S, CmpOp::NE>>(std::move(a), std::move(b));
        case ExprKind::LT: return binaryNode<Compare<S, CmpOp::LT>>(std::move(a), std::move(b));
        case ExprKind::LE: return binaryNode<Compare<S, CmpOp::LE>>(std::move(a), std::move(b));
        case ExprKind::GT: return binaryNode<Compare<S, CmpOp::GT>>(std::move(a), std::move(b));
        default: return binaryNode<Compare<S, CmpOp::GE>>(std::move(a), std::move(b));
      }
    });
  }

  /// e as an operand of a LoadProduct: a load of a float32 buffer, or a padded one
  /// (if_then_else(guard, load, constant)), either of them possibly broadcast.
  bool productOperand(const Expr& e, int lane, LoadProduct<Element<float, float>, float>::Operand& out) {
    const Expr& x = e.as<BroadcastNode>() ? e.as<BroadcastNode>()->value : e;
    const Expr* loaded = &x;
    float otherwise = 0;
    auto guarded = x.kind() == ExprKind::IfThenElse ? static_cast<const SelectNode*>(x.get()) : nullptr;
    if (guarded) {
      auto constant = guarded->falseValue.as<BroadcastNode>() ? guarded->falseValue.as<BroadcastNode>()->value.as<FloatImmNode>()
                                                              : guarded->falseValue.as<FloatImmNode>();
      if (!constant) return false;
      otherwise = float(constant->value);
      loaded = &guarded->trueValue;
    }
    auto l = loaded->as<LoadNode>();
    if (!l || l->buffer->dtype != DataType::float32()) return false;
    int laneOfX = x.type().isScalar() ? -1 : lane;
    if (guarded) out.guard = expr<int64_t>(guarded->condition, laneOfX);
    out.otherwise = otherwise;
    out.buffer = usedBuffer(l->buffer);
    out.index = index(l->index, l->index.type().isScalar() ? -1 : laneOfX);
    return true;
  }

  template <class T>
  Ptr<T> arithmetic(const Expr& e, int lane) {
    auto x = static_cast<const BinaryNode*>(e.get());
    if constexpr (std::is_same_v<T, float>) {
      auto n = std::make_unique<LoadProduct<Element<float, float>, float>>();
      if (e.kind() == ExprKind::Mul && e.type().element() == DataType::float32() && productOperand(x->a, lane, n->a) &&
          productOperand(x->b, lane, n->b))
        return n;
    }
    Ptr<T> a = expr<T>(x->a, lane), b = expr<T>(x->b, lane);
    if constexpr (std::is_same_v<T, int64_t>) {
      IntType type = intTypeOf(x->a.type());
      auto typed = [&](auto n) -> Ptr<int64_t> {
        n->type = type;
        return n;
      };
      switch (e.kind()) {
        case ExprKind::Add: return typed(binaryNode<IntArith<IntOp::Add>>(std::move(a), std::move(b)));
        case ExprKind::Sub: return typed(binaryNode<IntArith<IntOp::Sub>>(std::move(a), std::move(b)));
        case ExprKind::Mul: return typed(binaryNode<IntArith<IntOp::Mul>>(std::move(a), std::move(b)));
        case ExprKind::Min: return typed(binaryNode<IntArith<IntOp::Min>>(std::move(a), std::move(b)));
        case ExprKind::Max: return typed(binaryNode<IntArith<IntOp::Max>>(std::move(a), std::move(b)));
        case ExprKind::Div: return typed(binaryNode<IntDivide<DivOp::TruncDiv>>(std::move(a), std::move(b)));
        case ExprKind::Mod: return typed(binaryNode<IntDivide<DivOp::TruncMod>>(std::move(a), std::move(b)));
        case ExprKind::FloorDiv: return typed(binaryNode<IntDivide<DivOp::FloorDiv>>(std::move(a), std::move(b)));
        default: return typed(binaryNode<IntDivide<DivOp::FloorMod>>(std::move(a), std::move(b)));
      }
    } else {
      switch (e.kind()) {
        case ExprKind::Add: return binaryNode<FloatArith<T, FloatOp::Add>>(std::move(a), std::move(b));
        case ExprKind::Sub: return binaryNode<FloatArith<T, FloatOp::Sub>>(std::move(a), std::move(b));
        case ExprKind::Mul: return binaryNode<FloatArith<T, FloatOp::Mul>>(std::move(a), std::move(b));
        case ExprKind::Div: return binaryNode<FloatArith<T, FloatOp::Div>>(std::move(a), std::move(b));
        case ExprKind::Min: return binaryNode<FloatArith<T, FloatOp::Min>>(std::move(a), std::move(b));
        case ExprKind::Max: return binaryNode<FloatArith<T, FloatOp::Max>>(std::move(a), std::move(b));
        default: unknown(e, "integer division or modulo of floats");
      }
    }
  }

  /// e itself as a node (its operands may still be hoisted or affine).
  template <class T>
  Ptr<T> node(const Expr& e, int lane) {
    switch (e.kind()) {
      case ExprKind::IntImm: return std::make_unique<Constant<T>>(T(e.as<IntImmNode>()->value));
      case ExprKind::FloatImm: return std::make_unique<Constant<T>>(T(e.as<FloatImmNode>()->value));
      case ExprKind::Var:
        if constexpr (std::is_same_v<T, int64_t>) return std::make_unique<SlotRead>(slotOf(e.as<VarNode>()));
        unknown(e, "a non-integer variable");
      case ExprKind::Ramp:
        if constexpr (std::is_same_v<T, int64_t>) {
          auto r = e.as<RampNode>();
          auto n = binaryNode<IntArith<IntOp::Mul>>(expr<int64_t>(r->stride, -1), Ptr<int64_t>(std::make_unique<Constant<int64_t>>(lane)));
          n->type = intTypeOf(e.type());
          auto sum = binaryNode<IntArith<IntOp::Add>>(expr<int64_t>(r->base, -1), Ptr<int64_t>(std::move(n)));
          sum->type = intTypeOf(e.type());
          return sum;
        }
        unknown(e, "a non-integer ramp");
      case ExprKind::Broadcast: return expr<T>(e.as<BroadcastNode>()->value, -1);
      case ExprKind::Load: return loadOf<T>(e.as<LoadNode>(), lane);
      case ExprKind::Select:
      case ExprKind::IfThenElse: {
        auto x = static_cast<const SelectNode*>(e.get());
        auto choose = [&](auto n) -> Ptr<T> {
          n->condition = expr<int64_t>(x->condition, lane);
          n->whenTrue = expr<T>(x->trueValue, lane);
          n->whenFalse = expr<T>(x->falseValue, lane);
          return n;
        };
        if (e.kind() == ExprKind::IfThenElse) return choose(std::make_unique<Choose<T, true>>());
        return choose(std::make_unique<Choose<T, false>>());
      }
      case ExprKind::Cast: return castOf<T>(e, lane);
      case ExprKind::Call: return callOf<T>(e, lane);
      case ExprKind::Not:
        if constexpr (std::is_same_v<T, int64_t>) {
          auto n = std::make_unique<LogicalNot>();
          n->a = expr<int64_t>(e.as<NotNode>()->a, lane);
          return n;
        }
        unknown(e, "a non-boolean not");
      case ExprKind::EQ:
      case ExprKind::NE:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE:
        if constexpr (std::is_same_v<T, int64_t>) return comparison(e, lane);
        unknown(e, "a non-boolean comparison");
      case ExprKind::And:
      case ExprKind::Or:
        if constexpr (std::is_same_v<T, int64_t>) {
          auto x = static_cast<const BinaryNode*>(e.get());
          if (e.kind() == ExprKind::And) return binaryNode<Logical<true>>(expr<int64_t>(x->a, lane), expr<int64_t>(x->b, lane));
          return binaryNode<Logical<false>>(expr<int64_t>(x->a, lane), expr<int64_t>(x->b, lane));
        }
        unknown(e, "a non-boolean logical operator");
      case ExprKind::Add:
      case ExprKind::Sub:
      case ExprKind::Mul:
      case ExprKind::Div:
      case ExprKind::Mod:
      case ExprKind::FloorDiv:
      case ExprKind::FloorMod:
      case ExprKind::Min:
      case ExprKind::Max: return arithmetic<T>(e, lane);
      default: unknown(e, "an expression the evaluator does not know");
    }
  }
};

// Clang (15) loses the instantiations the mutual recursion of these templates needs unless
// they are spelled out.
template Ptr<int64_t> Compiler::node<int64_t>(const Expr&, int);
template Ptr<float> Compiler::node<float>(const Expr&, int);
template Ptr<double> Compiler::node<double>(const Expr&, int);

}  // namespace
}  // namespace loopir

struct LoopIrEvaluator::Program {
  std::string function;
  std::vector<ir::Buffer> buffers;
  size_t numArgs = 0;
  int numOutputs = 0;
  int slotCount = 0;
  loopir::StmtPtr body;
};

LoopIrEvaluator::LoopIrEvaluator(const passes::LoweredFunction& function) : program_(std::make_unique<Program>()) {
  auto body = std::make_unique<loopir::Function>();
  loopir::Compiler compiler(function, &body->hoisted);
  body->body = compiler.stmt(function.body);
  program_->body = std::move(body);
  program_->function = function.name;
  program_->buffers = compiler.buffers;
  program_->numArgs = function.args.size();
  program_->numOutputs = function.numOutputs;
  program_->slotCount = compiler.slotCount;
}

LoopIrEvaluator::~LoopIrEvaluator() = default;
LoopIrEvaluator::LoopIrEvaluator(LoopIrEvaluator&&) noexcept = default;

void LoopIrEvaluator::run(const std::vector<runtime::Tensor>& args) const {
  const Program& p = *program_;
  TESSEL_CHECK(args.size() == p.numArgs, "loop IR evaluator, function '{}': {} arguments given, {} expected", p.function,
               args.size(), p.numArgs);
  std::vector<loopir::BufferState> buffers(p.buffers.size());
  std::vector<std::vector<char>> storage(p.buffers.size());
  std::vector<std::vector<uint8_t>> written(p.buffers.size());
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const ir::Buffer& b = p.buffers[i];
    loopir::BufferState& s = buffers[i];
    s.node = b.get();
    s.size = b->elementCount();
    if (i < p.numArgs) {
      TESSEL_CHECK(args[i].dtype() == b->dtype && args[i].numel() == s.size,
                   "loop IR evaluator, function '{}': argument '{}' must be {} of {} elements, not {} of {}", p.function, b->name,
                   b->dtype.str(), s.size, args[i].dtype().str(), args[i].numel());
      s.data = static_cast<char*>(args[i].data());
      if (i < p.numArgs - size_t(p.numOutputs)) continue;  // an input: all of it is written
    } else {
      storage[i].resize(size_t(s.size * b->dtype.storageBytes()));
      s.data = storage[i].data();
    }
    written[i].assign(size_t(s.size), 0);
    s.written = written[i].data();
  }
  std::vector<int64_t> slots(size_t(std::max(p.slotCount, 1)));
  loopir::Context context{slots.data(), buffers.data(), &p.function};
  p.body->run(context);
}

}  // namespace tessel::kernelcheck
