/// The executable form of the loop-IR evaluator (LoopIrEvaluator.h): a tree of small node
/// objects, one virtual call per node, loop variables in numbered slots and buffers in a
/// numbered table, so that running a kernel does no name lookups. Every value is held in one
/// of three C++ types: int64_t for all integers and bools (kept normalized to their own width,
/// as the C code's narrow types are), float for float32 and float16 (the C code computes
/// float16 in float) and double for float64.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/Expr.h"
#include "schedule/State.h"
#include "support/Error.h"

namespace tessel::kernelcheck::loopir {

/// One buffer while the program runs. `written` is null for inputs (always initialized).
struct BufferState {
  char* data = nullptr;
  int64_t size = 0;
  uint8_t* written = nullptr;
  const ir::BufferNode* node = nullptr;
};

struct Context {
  int64_t* slots = nullptr;
  BufferState* buffers = nullptr;
  const std::string* function = nullptr;
};

[[noreturn]] void failAccess(const Context& c, const char* what, int bufferId, int64_t index);
[[noreturn]] void failArithmetic(const Context& c, const std::string& message);

template <class T>
struct Scalar {
  virtual ~Scalar() = default;
  virtual T eval(Context& c) const = 0;
};
template <class T>
using Ptr = std::unique_ptr<Scalar<T>>;

/// c0 + sum of coefficient * slot: the index arithmetic of almost every load and store,
/// evaluated without a node per term. `general` replaces it where the index is not affine.
struct Index {
  static constexpr int kMaxTerms = 8;
  int64_t c0 = 0;
  int terms = 0;
  std::array<int, kMaxTerms> slot{};
  std::array<int64_t, kMaxTerms> coefficient{};
  Ptr<int64_t> general;

  int64_t eval(Context& c) const {
    if (general) return general->eval(c);
    int64_t v = c0;
    for (int i = 0; i < terms; ++i) v += coefficient[size_t(i)] * c.slots[slot[size_t(i)]];
    return v;
  }
};

/// A checked element access: in bounds, and (for buffers the program writes) written before read.
inline int64_t checkedIndex(Context& c, int bufferId, const Index& index, bool read) {
  int64_t i = index.eval(c);
  const BufferState& b = c.buffers[bufferId];
  if (uint64_t(i) >= uint64_t(b.size)) failAccess(c, read ? "load out of bounds" : "store out of bounds", bufferId, i);
  if (b.written) {
    if (read && !b.written[i]) failAccess(c, "load of an element never written", bufferId, i);
    if (!read) b.written[i] = 1;
  }
  return i;
}

// ---- element storage: how each dtype sits in memory and what it computes as -------------------

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);

/// Storage S holds values computed as R.
template <class S, class R>
struct Element {
  static R read(const char* data, int64_t i) {
    S s;
    std::memcpy(&s, data + i * int64_t(sizeof(S)), sizeof(S));
    return R(s);
  }
  static void write(char* data, int64_t i, R v) {
    S s = S(v);
    std::memcpy(data + i * int64_t(sizeof(S)), &s, sizeof(S));
  }
};
struct HalfElement {
  static float read(const char* data, int64_t i) {
    uint16_t h;
    std::memcpy(&h, data + i * 2, 2);
    return halfToFloat(h);
  }
  static void write(char* data, int64_t i, float v) {
    uint16_t h = floatToHalf(v);
    std::memcpy(data + i * 2, &h, 2);
  }
};
struct BoolElement {
  static int64_t read(const char* data, int64_t i) { return data[i] != 0; }
  static void write(char* data, int64_t i, int64_t v) { data[i] = v != 0; }
};

template <class E, class R>
struct Load : Scalar<R> {
  int buffer;
  Index index;
  R eval(Context& c) const override {
    int64_t i = checkedIndex(c, buffer, index, true);
    return E::read(c.buffers[buffer].data, i);
  }
};

/// a[i] * b[j]: the product of a multiply-add, two loads in one node. Either load may be
/// guarded (if_then_else(guard, a[i], otherwise): a padded read), and then runs only where
/// its guard holds.
template <class E, class R>
struct LoadProduct : Scalar<R> {
  struct Operand {
    int buffer = 0;
    Index index;
    Ptr<int64_t> guard;  ///< null: always read
    R otherwise = 0;
    R eval(Context& c) const {
      if (guard && !guard->eval(c)) return otherwise;
      return E::read(c.buffers[buffer].data, checkedIndex(c, buffer, index, true));
    }
  };
  Operand a, b;
  R eval(Context& c) const override {
    R x = a.eval(c);
    return x * b.eval(c);
  }
};

// ---- leaves -----------------------------------------------------------------------------------

template <class T>
struct Constant : Scalar<T> {
  T value;
  explicit Constant(T v) : value(v) {}
  T eval(Context&) const override { return value; }
};

struct SlotRead : Scalar<int64_t> {
  int slot;
  explicit SlotRead(int s) : slot(s) {}
  int64_t eval(Context& c) const override { return c.slots[slot]; }
};

struct AffineValue : Scalar<int64_t> {
  Index index;
  int64_t eval(Context& c) const override { return index.eval(c); }
};

// ---- integers ---------------------------------------------------------------------------------

/// An integer type's width and signedness: results are wrapped to it, as the C code's
/// arithmetic in the unsigned type of at least 32 bits, cast back, does.
struct IntType {
  int bits = 64;
  bool isUnsigned = false;
  int64_t wrap(int64_t v) const {
    if (bits >= 64) return v;
    if (bits == 1) return v != 0;
    uint64_t u = uint64_t(v) << (64 - bits);
    return isUnsigned ? int64_t(u >> (64 - bits)) : (int64_t(u) >> (64 - bits));
  }
  int64_t lowest() const { return isUnsigned ? 0 : bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1)); }
  int64_t highest() const {
    if (bits >= 64) return std::numeric_limits<int64_t>::max();
    return isUnsigned ? (int64_t(1) << bits) - 1 : (int64_t(1) << (bits - 1)) - 1;
  }
};

enum class IntOp { Add, Sub, Mul, Min, Max };

template <IntOp Op>
struct IntArith : Scalar<int64_t> {
  Ptr<int64_t> a, b;
  IntType type;
  int64_t eval(Context& c) const override {
    int64_t x = a->eval(c), y = b->eval(c);
    switch (Op) {
      case IntOp::Add: return type.wrap(int64_t(uint64_t(x) + uint64_t(y)));
      case IntOp::Sub: return type.wrap(int64_t(uint64_t(x) - uint64_t(y)));
      case IntOp::Mul: return type.wrap(int64_t(uint64_t(x) * uint64_t(y)));
      case IntOp::Min: return x < y ? x : y;
      case IntOp::Max: return x > y ? x : y;
    }
    return 0;
  }
};

enum class DivOp { TruncDiv, TruncMod, FloorDiv, FloorMod };

/// Division and modulo: C's truncating `/` and `%`, and the prelude's floor forms. A zero
/// divisor, or a quotient the type cannot hold (INT_MIN / -1), is an Error, not UB.
template <DivOp Op>
struct IntDivide : Scalar<int64_t> {
  Ptr<int64_t> a, b;
  IntType type;
  int64_t eval(Context& c) const override {
    int64_t x = a->eval(c), y = b->eval(c);
    if (y == 0) failArithmetic(c, fmt::format("integer division by zero ({} / 0)", x));
    // C divides narrower types in int, where -128 / -1 is no overflow.
    if (y == -1 && x == type.lowest() && !type.isUnsigned && type.bits >= 32)
      failArithmetic(c, fmt::format("integer division overflows ({} / -1)", x));
    int64_t q = x / y, m = x % y;
    bool adjust = m != 0 && ((m < 0) != (y < 0));
    switch (Op) {
      case DivOp::TruncDiv: return q;  // unwrapped: C's `/` on narrower types gives an int (-128 / -1 is 128)
      case DivOp::TruncMod: return type.wrap(m);
      case DivOp::FloorDiv: return type.wrap(q - adjust);
      case DivOp::FloorMod: return type.wrap(m + (adjust ? y : 0));
    }
    return 0;
  }
};

struct LogicalNot : Scalar<int64_t> {
  Ptr<int64_t> a;
  int64_t eval(Context& c) const override { return !a->eval(c); }
};

/// && and || evaluate their right side only when needed, as C does (guards protect loads).
template <bool IsAnd>
struct Logical : Scalar<int64_t> {
  Ptr<int64_t> a, b;
  int64_t eval(Context& c) const override {
    bool x = a->eval(c) != 0;
    if (IsAnd ? !x : x) return x;
    return b->eval(c) != 0;
  }
};

// ---- floats and any type ----------------------------------------------------------------------

enum class FloatOp { Add, Sub, Mul, Div, Min, Max };

template <class T, FloatOp Op>
struct FloatArith : Scalar<T> {
  Ptr<T> a, b;
  T eval(Context& c) const override {
    T x = a->eval(c), y = b->eval(c);
    switch (Op) {
      case FloatOp::Add: return x + y;
      case FloatOp::Sub: return x - y;
      case FloatOp::Mul: return x * y;
      case FloatOp::Div: return x / y;
      case FloatOp::Min: return x < y ? x : y;  // tessel_min: NaN compares false, gives y
      case FloatOp::Max: return x > y ? x : y;
    }
    return 0;
  }
};

enum class CmpOp { EQ, NE, LT, LE, GT, GE };

template <class T, CmpOp Op>
struct Compare : Scalar<int64_t> {
  Ptr<T> a, b;
  int64_t eval(Context& c) const override {
    T x = a->eval(c), y = b->eval(c);
    switch (Op) {
      case CmpOp::EQ: return x == y;
      case CmpOp::NE: return x != y;
      case CmpOp::LT: return x < y;
      case CmpOp::LE: return x <= y;
      case CmpOp::GT: return x > y;
      case CmpOp::GE: return x >= y;
    }
    return 0;
  }
};

/// Lazy: only the chosen side runs (if_then_else guards loads). Select evaluates both sides
/// first: the IR says so, and a vector select really reads both.
template <class T, bool Lazy>
struct Choose : Scalar<T> {
  Ptr<int64_t> condition;
  Ptr<T> whenTrue, whenFalse;
  T eval(Context& c) const override {
    if (Lazy) return condition->eval(c) ? whenTrue->eval(c) : whenFalse->eval(c);
    T t = whenTrue->eval(c), f = whenFalse->eval(c);
    return condition->eval(c) ? t : f;
  }
};

/// A conversion between the three value types, or within one (an integer narrowed, a float
/// rounded to float16). Float to integer out of the target's range is UB in C: an Error.
template <class To, class From>
struct Convert : Scalar<To> {
  Ptr<From> value;
  IntType intType;     ///< the target, when To is int64_t
  bool toBool = false;
  bool toHalf = false;
  To eval(Context& c) const override {
    From v = value->eval(c);
    if constexpr (std::is_same_v<To, int64_t>) {
      if (toBool) return v != 0;
      if constexpr (!std::is_same_v<From, int64_t>) {
        if (!(std::trunc(v) >= double(intType.lowest()) && std::trunc(v) < double(intType.highest()) + 1.0))
          failArithmetic(c, fmt::format("cast of {} to a {}-bit integer is out of range", double(v), intType.bits));
        return int64_t(v);
      } else {
        return intType.wrap(v);
      }
    } else {
      To r = To(v);
      if constexpr (std::is_same_v<To, float>)
        if (toHalf) r = halfToFloat(floatToHalf(r));
      return r;
    }
  }
};

template <class T>
struct MathCall : Scalar<T> {
  ir::Intrinsic op;
  Ptr<T> a, b;
  T eval(Context& c) const override {
    T x = a->eval(c);
    switch (op) {
      case ir::Intrinsic::Exp: return std::exp(x);
      case ir::Intrinsic::Log: return std::log(x);
      case ir::Intrinsic::Sqrt: return std::sqrt(x);
      case ir::Intrinsic::Rsqrt: return T(1) / std::sqrt(x);
      case ir::Intrinsic::Tanh: return std::tanh(x);
      case ir::Intrinsic::Sigmoid: return T(1) / (T(1) + std::exp(-x));
      case ir::Intrinsic::Erf: return std::erf(x);
      case ir::Intrinsic::Pow: return std::pow(x, b->eval(c));
      case ir::Intrinsic::Abs: return std::fabs(x);
      case ir::Intrinsic::Floor: return std::floor(x);
      case ir::Intrinsic::Ceil: return std::ceil(x);
      case ir::Intrinsic::Round: return std::round(x);
    }
    return x;
  }
};

struct IntAbs : Scalar<int64_t> {
  Ptr<int64_t> a;
  IntType type;
  int64_t eval(Context& c) const override {
    int64_t x = a->eval(c);
    return x < 0 ? type.wrap(int64_t(0 - uint64_t(x))) : x;
  }
};

// ---- statements -------------------------------------------------------------------------------

struct Statement {
  virtual ~Statement() = default;
  virtual void run(Context& c) const = 0;
};
using StmtPtr = std::unique_ptr<Statement>;

struct Sequence : Statement {
  std::vector<StmtPtr> stmts;
  void run(Context& c) const override {
    for (auto& s : stmts) s->run(c);
  }
};

/// Integer index arithmetic hoisted out of inner loops (the divisions and remainders of fused
/// loop variables, mostly): computed into slots once per iteration of the loop whose variable
/// they depend on. Only what cannot fail is hoisted, so running it where the original code
/// would not (under a guard) changes nothing.
struct Hoisted {
  std::vector<std::pair<int, Ptr<int64_t>>> values;  ///< slot, value; in dependency order
  void run(Context& c) const {
    for (auto& [slot, value] : values) c.slots[slot] = value->eval(c);
  }
};

/// Every CPU loop kind runs as a serial loop; the bounds are read once, as the C loop's are
/// (the body cannot change them).
struct Loop : Statement {
  int slot = 0;
  Ptr<int64_t> min, extent;
  Hoisted hoisted;
  StmtPtr body;
  void run(Context& c) const override {
    int64_t lo = min->eval(c), hi = lo + extent->eval(c);
    for (int64_t v = lo; v < hi; ++v) {
      c.slots[slot] = v;
      hoisted.run(c);
      body->run(c);
    }
  }
};

/// The function's body after what depends on no loop at all.
struct Function : Statement {
  Hoisted hoisted;
  StmtPtr body;
  void run(Context& c) const override {
    hoisted.run(c);
    body->run(c);
  }
};

struct Branch : Statement {
  Ptr<int64_t> condition;
  StmtPtr thenCase, elseCase;  ///< elseCase may be null
  void run(Context& c) const override {
    if (condition->eval(c)) thenCase->run(c);
    else if (elseCase) elseCase->run(c);
  }
};

/// A local buffer comes into scope uninitialized each time its Allocate is entered (a C array
/// declared in a loop body holds garbage on each iteration).
struct Allocation : Statement {
  int buffer = 0;
  StmtPtr body;
  void run(Context& c) const override {
    BufferState& b = c.buffers[buffer];
    std::memset(b.written, 0, size_t(b.size));
    body->run(c);
  }
};

struct Nothing : Statement {
  void run(Context&) const override {}
};

template <class E, class R>
struct Store : Statement {
  int buffer = 0;
  Index index;
  Ptr<R> value;
  void run(Context& c) const override {
    R v = value->eval(c);
    int64_t i = checkedIndex(c, buffer, index, false);
    E::write(c.buffers[buffer].data, i, v);
  }
};

/// acc[i] = acc[i] + addend (the update of a reduction), where the addend does not read acc:
/// one index evaluation for the load and the store.
template <class E, class R>
struct Accumulate : Statement {
  int buffer = 0;
  Index index;
  Ptr<R> addend;
  void run(Context& c) const override {
    int64_t i = checkedIndex(c, buffer, index, true);
    R sum = E::read(c.buffers[buffer].data, i) + addend->eval(c);
    E::write(c.buffers[buffer].data, i, sum);
  }
};

/// A vector store: every lane's value first, then the lanes' stores, as the C code computes
/// the whole vector before storing it.
/// The most lanes a vectorized loop gets (a schedule's limit).
constexpr int kMaxVectorLanes = int(schedule::kMaxVectorLanes);

template <class E, class R>
struct VectorStore : Statement {
  int buffer = 0;
  std::vector<Index> index;
  std::vector<Ptr<R>> value;
  void run(Context& c) const override {
    R v[kMaxVectorLanes];
    for (size_t l = 0; l < value.size(); ++l) v[l] = value[l]->eval(c);
    for (size_t l = 0; l < value.size(); ++l) {
      int64_t i = checkedIndex(c, buffer, index[l], false);
      E::write(c.buffers[buffer].data, i, v[l]);
    }
  }
};

}  // namespace tessel::kernelcheck::loopir
