/// The expression nodes of the loop IR, shared by tensor expressions (before lowering) and by
/// lowered loop nests (after). Nodes are immutable and shared; an `Expr` is a cheap handle.
/// Variables compare by identity, everything else by structure (see Equality.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/DataType.h"

namespace tessel::ir {

enum class ExprKind {
  IntImm, FloatImm, Var,
  Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max,
  EQ, NE, LT, LE, GT, GE, And, Or, Not,
  Select, IfThenElse, Cast, Call, ProducerLoad, Load, Ramp, Broadcast, Reduce
};

struct ExprNode {
  ExprKind kind;
  DataType type;
  ExprNode(ExprKind k, DataType t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
};

class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  Expr(int value);      ///< an int64 index constant
  Expr(int64_t value);  ///< an int64 index constant
  Expr(float value);    ///< a float32 constant
  Expr(double value);   ///< a float32 constant (tensor math is float32 unless cast)

  bool defined() const { return node_ != nullptr; }
  ExprKind kind() const { return node_->kind; }
  DataType type() const { return node_->type; }
  const ExprNode* get() const { return node_.get(); }
  bool sameAs(const Expr& other) const { return node_ == other.node_; }
  template <class T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  template <class T>
  const T* asKind(ExprKind k) const {
    return node_ && node_->kind == k ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};

struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
};

struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
};

/// A variable: a loop index, a reduction axis, an index lambda argument.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType type = DataType::int64());
  const VarNode* node() const { return as<VarNode>(); }
  const std::string& name() const { return node()->name; }
};

/// Add..Or: two operands of the same type (comparisons and And/Or produce bool).
struct BinaryNode : ExprNode {
  Expr a, b;
  BinaryNode(ExprKind k, DataType t, Expr x, Expr y) : ExprNode(k, t), a(std::move(x)), b(std::move(y)) {}
};

struct NotNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  Expr a;
  NotNode(Expr x);
};

/// Select evaluates both branches; IfThenElse evaluates only the taken one (padding reads
/// guarded by it may be out of bounds otherwise).
struct SelectNode : ExprNode {
  Expr condition, trueValue, falseValue;
  SelectNode(ExprKind k, Expr c, Expr t, Expr f);
};

struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;
  CastNode(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
};

enum class Intrinsic { Exp, Log, Sqrt, Tanh, Sigmoid, Erf, Pow, Abs, Floor, Ceil, Round, Rsqrt };
const char* intrinsicName(Intrinsic op);

struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Intrinsic op;
  std::vector<Expr> args;
  CallNode(DataType t, Intrinsic o, std::vector<Expr> a) : ExprNode(kKind, t), op(o), args(std::move(a)) {}
};

/// A read of a tensor by name and multi-dimensional index (before lowering). Inside a compute
/// DAG the name identifies the tensor; `identity` is the producing operation as the user
/// built it (opaque here), which lets the DAG make names unique before names take over.
struct ProducerLoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::ProducerLoad;
  std::string producer;
  std::vector<Expr> indices;
  std::shared_ptr<const void> identity;
  ProducerLoadNode(DataType t, std::string p, std::vector<Expr> i, std::shared_ptr<const void> id)
      : ExprNode(kKind, t), producer(std::move(p)), indices(std::move(i)), identity(std::move(id)) {}
};

/// A flat memory buffer of the lowered program: a kernel argument or a local allocation.
struct BufferNode {
  /// Global: a kernel argument or a whole-call buffer. Local: private to one thread (on the
  /// CPU, to one loop iteration). Shared: one per GPU thread block, seen by all its threads.
  enum class Scope { Global, Local, Shared };
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  ///< in elements, same rank as shape
  Scope scope = Scope::Global;
  /// > 0: kept in variables of this many lanes (register promotion), not in memory.
  int registerLanes = 0;
  int64_t elementCount() const;  ///< allocation size, strides included
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer makeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape, BufferNode::Scope scope,
                  std::vector<int64_t> strides = {});

/// A read of a flat buffer; a vector index (Ramp) gives a vector load.
struct LoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Buffer buffer;
  Expr index;
  LoadNode(DataType t, Buffer b, Expr i) : ExprNode(kKind, t), buffer(std::move(b)), index(std::move(i)) {}
};

/// base, base + stride, ..., base + (lanes-1) * stride
struct RampNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  Expr base, stride;
  int lanes;
  RampNode(Expr b, Expr s, int l);
};

struct BroadcastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Expr value;
  int lanes;
  BroadcastNode(Expr v, int l);
};

/// A reduction axis or a data-parallel axis: a variable ranging over [0, extent).
struct IterVar {
  Var var;
  int64_t extent = 0;
};

enum class ReduceOp { Sum, Max, Min };
const char* reduceOpName(ReduceOp op);

/// The identity-initialised fold of `source` over `axes` (where `condition` holds).
struct ReduceNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Reduce;
  ReduceOp op;
  Expr source;
  std::vector<IterVar> axes;
  Expr condition;  ///< may be undefined: always true
  ReduceNode(ReduceOp o, Expr s, std::vector<IterVar> a, Expr c);
};

// ---- constructors -------------------------------------------------------------------------

Expr intImm(DataType type, int64_t value);
Expr floatImm(DataType type, double value);
Expr makeConst(DataType type, double value);  ///< int or float constant of `type`
/// Binary node; an integer or float literal on one side takes the other side's type.
Expr binary(ExprKind kind, Expr a, Expr b);
Expr cast(DataType type, Expr value);
Expr select(Expr condition, Expr trueValue, Expr falseValue);
Expr ifThenElse(Expr condition, Expr trueValue, Expr falseValue);
Expr call(Intrinsic op, std::vector<Expr> args);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr value, int lanes);
Expr load(Buffer buffer, Expr index);
Expr producerLoad(std::string producer, DataType type, std::vector<Expr> indices,
                  std::shared_ptr<const void> identity = nullptr);
Expr reduce(ReduceOp op, Expr source, std::vector<IterVar> axes, Expr condition = Expr());
/// The identity of a reduction: 0 for sum, the lowest value for max, the highest for min.
Expr reduceIdentity(ReduceOp op, DataType type);
/// combine(op, acc, x): acc + x, max(acc, x), min(acc, x).
Expr reduceCombine(ReduceOp op, Expr acc, Expr x);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  ///< float division; for integers use floordiv/truncdiv
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

/// The constant value of an integer immediate (possibly broadcast), if it is one. The pointer
/// points into `e`: keep `e` alive while using it (never pass a temporary).
const int64_t* asConstInt(const Expr& e);
bool isConstInt(const Expr& e, int64_t value);
bool isConst(const Expr& e);  ///< int or float immediate

}  // namespace tessel::ir
