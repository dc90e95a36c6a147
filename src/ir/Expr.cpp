#include "ir/Expr.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/Error.h"

namespace tessel::ir {

Expr::Expr(int value) : Expr(intImm(DataType::int64(), value)) {}
Expr::Expr(int64_t value) : Expr(intImm(DataType::int64(), value)) {}
Expr::Expr(float value) : Expr(floatImm(DataType::float32(), value)) {}
Expr::Expr(double value) : Expr(floatImm(DataType::float32(), value)) {}

Var::Var(std::string name, DataType type) : Expr(std::make_shared<VarNode>(std::move(name), type)) {}

NotNode::NotNode(Expr x) : ExprNode(kKind, x.type()), a(std::move(x)) {}

SelectNode::SelectNode(ExprKind k, Expr c, Expr t, Expr f)
    : ExprNode(k, t.type()), condition(std::move(c)), trueValue(std::move(t)), falseValue(std::move(f)) {}

RampNode::RampNode(Expr b, Expr s, int l) : ExprNode(kKind, b.type().withLanes(l)), base(std::move(b)), stride(std::move(s)), lanes(l) {}

BroadcastNode::BroadcastNode(Expr v, int l) : ExprNode(kKind, v.type().withLanes(l)), value(std::move(v)), lanes(l) {}

ReduceNode::ReduceNode(ReduceOp o, Expr s, std::vector<IterVar> a, Expr c)
    : ExprNode(kKind, s.type()), op(o), source(std::move(s)), axes(std::move(a)), condition(std::move(c)) {}

const char* intrinsicName(Intrinsic op) {
  switch (op) {
    case Intrinsic::Exp: return "exp";
    case Intrinsic::Log: return "log";
    case Intrinsic::Sqrt: return "sqrt";
    case Intrinsic::Tanh: return "tanh";
    case Intrinsic::Sigmoid: return "sigmoid";
    case Intrinsic::Erf: return "erf";
    case Intrinsic::Pow: return "pow";
    case Intrinsic::Abs: return "abs";
    case Intrinsic::Floor: return "floor";
    case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Round: return "round";
    case Intrinsic::Rsqrt: return "rsqrt";
  }
  return "?";
}

const char* reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
  }
  return "?";
}

int64_t BufferNode::elementCount() const {
  if (shape.empty()) return 1;
  int64_t last = 0;
  for (size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * strides[i];
  return last + 1;
}

Buffer makeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape, BufferNode::Scope scope,
                  std::vector<int64_t> strides) {
  auto b = std::make_shared<BufferNode>();
  b->name = std::move(name);
  b->dtype = dtype;
  b->shape = std::move(shape);
  if (strides.empty()) {
    strides.assign(b->shape.size(), 1);
    for (int i = int(b->shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * b->shape[i + 1];
  }
  TESSEL_ICHECK(strides.size() == b->shape.size());
  b->strides = std::move(strides);
  b->scope = scope;
  return b;
}

Expr intImm(DataType type, int64_t value) {
  TESSEL_ICHECK(type.isIntegral() || type.isBool());
  if (type.isVector()) return broadcast(intImm(type.element(), value), type.lanes);
  // Wrap to the type's width so that constants behave as the target's arithmetic does.
  if (type.bits < 64) {
    int64_t mask = (int64_t(1) << type.bits) - 1;
    value &= mask;
    if (type.isInt() && (value >> (type.bits - 1)) & 1) value -= (int64_t(1) << type.bits);
  }
  return Expr(std::make_shared<IntImmNode>(type, value));
}

Expr floatImm(DataType type, double value) {
  TESSEL_ICHECK(type.isFloat());
  if (type.isVector()) return broadcast(floatImm(type.element(), value), type.lanes);
  if (type.bits == 32) value = double(float(value));
  return Expr(std::make_shared<FloatImmNode>(type, value));
}

Expr makeConst(DataType type, double value) {
  if (type.isFloat()) return floatImm(type, value);
  return intImm(type, int64_t(value));
}

namespace {

bool isImmediate(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

Expr convertImmediate(const Expr& imm, DataType to) {
  double v = imm.as<IntImmNode>() ? double(imm.as<IntImmNode>()->value) : imm.as<FloatImmNode>()->value;
  if (to.isBool()) return intImm(to, v != 0);
  if (to.isIntegral() && imm.as<IntImmNode>()) return intImm(to, imm.as<IntImmNode>()->value);
  return makeConst(to, v);
}

bool isComparison(ExprKind k) { return k >= ExprKind::EQ && k <= ExprKind::GE; }

const char* kindSymbol(ExprKind k) {
  switch (k) {
    case ExprKind::Add: return "+";
    case ExprKind::Sub: return "-";
    case ExprKind::Mul: return "*";
    case ExprKind::Div: return "/";
    default: return "op";
  }
}

}  // namespace

Expr binary(ExprKind kind, Expr a, Expr b) {
  TESSEL_ICHECK(a.defined() && b.defined());
  if (a.type() != b.type()) {
    if (isImmediate(b) && b.type().isScalar()) {
      b = convertImmediate(b, a.type().element());
    } else if (isImmediate(a) && a.type().isScalar()) {
      a = convertImmediate(a, b.type().element());
    }
    if (a.type().isVector() && b.type().isScalar() && a.type().element() == b.type()) b = broadcast(b, a.type().lanes);
    if (b.type().isVector() && a.type().isScalar() && b.type().element() == a.type()) a = broadcast(a, b.type().lanes);
    if (a.type().isVector() && b.type().isScalar()) b = broadcast(b, a.type().lanes);
    if (b.type().isVector() && a.type().isScalar()) a = broadcast(a, b.type().lanes);
  }
  TESSEL_CHECK(a.type() == b.type(), "type mismatch in '{}': {} and {}; insert a cast", kindSymbol(kind),
               a.type().str(), b.type().str());
  DataType result = a.type();
  if (isComparison(kind)) result = DataType::boolean(a.type().lanes);
  if (kind == ExprKind::And || kind == ExprKind::Or)
    TESSEL_CHECK(a.type().isBool(), "logical and/or needs bool operands, got {}", a.type().str());
  return Expr(std::make_shared<BinaryNode>(kind, result, std::move(a), std::move(b)));
}

Expr cast(DataType type, Expr value) {
  if (value.type() == type) return value;
  // A cast keeps its value's lanes; a scalar made a vector is a broadcast of the cast scalar.
  if (type.isVector() && value.type().isScalar()) return broadcast(cast(type.element(), std::move(value)), type.lanes);
  if (isImmediate(value) && type.isScalar()) return convertImmediate(value, type);
  return Expr(std::make_shared<CastNode>(type, std::move(value)));
}

static Expr makeSelect(ExprKind k, Expr c, Expr t, Expr f) {
  if (t.type().element() != f.type().element()) {
    if (isImmediate(f)) f = convertImmediate(f, t.type().element());
    else if (isImmediate(t)) t = convertImmediate(t, f.type().element());
  }
  // Vector code (after vectorization) mixes per-lane and lane-invariant operands, as binary
  // operators do: the scalar ones are broadcast.
  int lanes = std::max({c.type().lanes, t.type().lanes, f.type().lanes});
  for (Expr* operand : {&c, &t, &f})
    if (lanes > 1 && operand->type().isScalar()) *operand = broadcast(*operand, lanes);
  TESSEL_CHECK(t.type() == f.type(), "select branches have different types: {} and {}", t.type().str(), f.type().str());
  TESSEL_CHECK(c.type().isBool(), "select condition must be bool, got {}", c.type().str());
  return Expr(std::make_shared<SelectNode>(k, std::move(c), std::move(t), std::move(f)));
}

Expr select(Expr c, Expr t, Expr f) { return makeSelect(ExprKind::Select, std::move(c), std::move(t), std::move(f)); }
Expr ifThenElse(Expr c, Expr t, Expr f) { return makeSelect(ExprKind::IfThenElse, std::move(c), std::move(t), std::move(f)); }

Expr call(Intrinsic op, std::vector<Expr> args) {
  TESSEL_CHECK(!args.empty(), "{} needs an argument", intrinsicName(op));
  DataType t = args[0].type();
  bool integerOk = op == Intrinsic::Abs;
  TESSEL_CHECK(t.isFloat() || integerOk, "{} needs a float argument, got {}", intrinsicName(op), t.str());
  if (op == Intrinsic::Pow) {
    TESSEL_CHECK(args.size() == 2, "pow needs two arguments");
    if (args[1].type() != t) args[1] = cast(t, args[1]);
  }
  return Expr(std::make_shared<CallNode>(t, op, std::move(args)));
}

Expr floordiv(Expr a, Expr b) { return binary(ExprKind::FloorDiv, std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return binary(ExprKind::FloorMod, std::move(a), std::move(b)); }
Expr truncdiv(Expr a, Expr b) { return binary(ExprKind::Div, std::move(a), std::move(b)); }
Expr truncmod(Expr a, Expr b) { return binary(ExprKind::Mod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return binary(ExprKind::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(ExprKind::Max, std::move(a), std::move(b)); }

Expr ramp(Expr base, Expr stride, int lanes) {
  if (stride.type() != base.type()) stride = cast(base.type(), stride);
  return Expr(std::make_shared<RampNode>(std::move(base), std::move(stride), lanes));
}

Expr broadcast(Expr value, int lanes) {
  TESSEL_ICHECK(value.type().isScalar());
  return Expr(std::make_shared<BroadcastNode>(std::move(value), lanes));
}

Expr load(Buffer buffer, Expr index) {
  DataType t = buffer->dtype.withLanes(index.type().lanes);
  return Expr(std::make_shared<LoadNode>(t, std::move(buffer), std::move(index)));
}

Expr producerLoad(std::string producer, DataType type, std::vector<Expr> indices, std::shared_ptr<const void> identity) {
  return Expr(std::make_shared<ProducerLoadNode>(type, std::move(producer), std::move(indices), std::move(identity)));
}

Expr reduce(ReduceOp op, Expr source, std::vector<IterVar> axes, Expr condition) {
  TESSEL_CHECK(!axes.empty(), "{} reduction needs at least one reduction axis", reduceOpName(op));
  return Expr(std::make_shared<ReduceNode>(op, std::move(source), std::move(axes), std::move(condition)));
}

Expr reduceIdentity(ReduceOp op, DataType type) {
  if (op == ReduceOp::Sum) return makeConst(type, 0);
  bool isMax = op == ReduceOp::Max;
  if (type.isFloat()) return floatImm(type, isMax ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  if (type.isBool()) return intImm(type, isMax ? 0 : 1);
  int64_t lo, hi;
  if (type.isUInt()) {
    lo = 0;
    hi = type.bits >= 64 ? -1 : int64_t((uint64_t(1) << type.bits) - 1);
  } else {
    lo = type.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (type.bits - 1));
    hi = type.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (type.bits - 1)) - 1;
  }
  return intImm(type, isMax ? lo : hi);
}

Expr reduceCombine(ReduceOp op, Expr acc, Expr x) {
  switch (op) {
    case ReduceOp::Sum: return acc + x;
    case ReduceOp::Max: return max(acc, x);
    case ReduceOp::Min: return min(acc, x);
  }
  return Expr();
}

Expr operator+(Expr a, Expr b) { return binary(ExprKind::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return binary(ExprKind::Sub, std::move(a), std::move(b)); }
Expr operator-(Expr a) { return binary(ExprKind::Sub, makeConst(a.type().element(), 0), a); }
Expr operator*(Expr a, Expr b) { return binary(ExprKind::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return binary(ExprKind::Div, std::move(a), std::move(b)); }
Expr operator==(Expr a, Expr b) { return binary(ExprKind::EQ, std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return binary(ExprKind::NE, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return binary(ExprKind::LT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return binary(ExprKind::LE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return binary(ExprKind::GT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return binary(ExprKind::GE, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return binary(ExprKind::And, std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return binary(ExprKind::Or, std::move(a), std::move(b)); }
Expr operator!(Expr a) { return Expr(std::make_shared<NotNode>(std::move(a))); }

const int64_t* asConstInt(const Expr& e) {
  if (!e.defined()) return nullptr;
  if (auto i = e.as<IntImmNode>()) return &i->value;
  if (auto b = e.as<BroadcastNode>()) return asConstInt(b->value);
  return nullptr;
}

bool isConstInt(const Expr& e, int64_t value) {
  auto v = asConstInt(e);
  return v && *v == value;
}

bool isConst(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

}  // namespace tessel::ir
