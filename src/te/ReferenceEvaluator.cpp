#include "te/ReferenceEvaluator.h"

#include <cmath>
#include <unordered_map>

#include "support/Error.h"

namespace tessel::te {

using namespace ir;

double roundToType(double v, DataType t) {
  if (t.isFloat()) {
    if (t.bits == 32) return double(float(v));
    if (t.bits == 16) {
      // Round to the nearest float16 value (ties to even) through its bit pattern.
      if (std::isnan(v) || std::isinf(v)) return v;
      int exponent;
      std::frexp(v, &exponent);
      int e = std::max(exponent - 1, -14);
      double quantum = std::ldexp(1.0, e - 10);
      double r = std::nearbyint(v / quantum) * quantum;
      return std::fabs(r) > 65504 ? std::copysign(INFINITY, v) : r;
    }
    return v;
  }
  if (t.isBool()) return v != 0 ? 1 : 0;
  if (t.bits >= 64) return double(int64_t(v));
  int64_t x = int64_t(v);
  int64_t mask = (int64_t(1) << t.bits) - 1;
  x &= mask;
  if (t.isInt() && ((x >> (t.bits - 1)) & 1)) x -= int64_t(1) << t.bits;
  return double(x);
}

namespace {

/// One op's body flattened into an array of nodes, children by index: variables become slots of
/// a frame and tensor reads point straight at the producer's values, so the element-by-element
/// walk does no name or hash lookups. The arithmetic is the expression's own, node by node.
class CompiledBody {
 public:
  CompiledBody(const ComputeDAG& dag, const TensorValues& values, const OperationNode& op) : dag_(dag), values_(values) {
    for (auto& axis : op.axes) axisSlots_.push_back(slotOf(axis.var.node(), true));
    root_ = compile(op.body);
  }

  /// The body's value at the output element `index`.
  double operator()(const std::vector<int64_t>& index) {
    for (size_t d = 0; d < axisSlots_.size(); ++d) frame_[size_t(axisSlots_[d])] = double(index[d]);
    return eval(root_);
  }

 private:
  struct Node {
    ExprKind kind = ExprKind::IntImm;
    DataType type;
    bool integralOperands = false;  ///< binary ops: their operands are integers (truncating division)
    bool fromFloat = false;         ///< casts: from a floating-point value
    double value = 0;               ///< constants
    int slot = -1;                  ///< variables
    Intrinsic call = Intrinsic::Exp;
    ReduceOp reduce = ReduceOp::Sum;
    std::vector<int> children;      ///< operands; a load's indices; a reduction's source, identity, condition
    std::vector<int> axisSlots;     ///< a reduction's variables
    std::vector<int64_t> extents;   ///< a reduction's extents; a load's producer shape
    const std::vector<double>* data = nullptr;  ///< a load's producer values
    const std::string* producer = nullptr;      ///< for the out-of-bounds message
  };

  int slotOf(const VarNode* var, bool bind) {
    auto it = slots_.find(var);
    if (it != slots_.end()) return it->second;
    TESSEL_CHECK(bind, "reference: variable '{}' is not bound by an axis of its op", var->name);
    int slot = int(frame_.size());
    slots_.emplace(var, slot);
    frame_.push_back(0);
    return slot;
  }

  int add(Node n) {
    nodes_.push_back(std::move(n));
    return int(nodes_.size()) - 1;
  }

  int compile(const Expr& e) {
    Node n;
    n.kind = e.kind();
    n.type = e.type();
    switch (e.kind()) {
      case ExprKind::IntImm: n.value = double(e.as<IntImmNode>()->value); return add(std::move(n));
      case ExprKind::FloatImm: n.value = e.as<FloatImmNode>()->value; return add(std::move(n));
      case ExprKind::Var: n.slot = slotOf(e.as<VarNode>(), false); return add(std::move(n));
      case ExprKind::Not: n.children = {compile(e.as<NotNode>()->a)}; return add(std::move(n));
      case ExprKind::Select:
      case ExprKind::IfThenElse: {
        auto s = static_cast<const SelectNode*>(e.get());
        n.children = {compile(s->condition), compile(s->trueValue), compile(s->falseValue)};
        return add(std::move(n));
      }
      case ExprKind::Cast: {
        auto c = e.as<CastNode>();
        n.fromFloat = c->value.type().isFloat();
        n.children = {compile(c->value)};
        return add(std::move(n));
      }
      case ExprKind::Call: {
        auto c = e.as<CallNode>();
        n.call = c->op;
        for (auto& a : c->args) n.children.push_back(compile(a));
        return add(std::move(n));
      }
      case ExprKind::ProducerLoad: {
        auto l = e.as<ProducerLoadNode>();
        auto it = values_.find(l->producer);
        TESSEL_CHECK(it != values_.end(), "reference: '{}' is read before it is computed", l->producer);
        n.data = &it->second;
        n.producer = &l->producer;
        n.extents = dag_.op(l->producer)->shape;
        for (auto& i : l->indices) n.children.push_back(compile(i));
        return add(std::move(n));
      }
      case ExprKind::Reduce: {
        auto r = e.as<ReduceNode>();
        n.reduce = r->op;
        for (auto& a : r->axes) {
          n.axisSlots.push_back(slotOf(a.var.node(), true));
          n.extents.push_back(a.extent);
        }
        n.children = {compile(r->source), compile(reduceIdentity(r->op, e.type()))};
        if (r->condition.defined()) n.children.push_back(compile(r->condition));
        return add(std::move(n));
      }
      default: break;
    }
    TESSEL_CHECK(e.kind() >= ExprKind::Add && e.kind() <= ExprKind::Or, "reference: cannot evaluate expression kind {}", int(e.kind()));
    auto b = static_cast<const BinaryNode*>(e.get());
    n.integralOperands = b->a.type().isIntegral();
    n.children = {compile(b->a), compile(b->b)};
    return add(std::move(n));
  }

  double load(const Node& n) {
    int64_t flat = 0;
    for (size_t d = 0; d < n.children.size(); ++d) {
      double i = eval(n.children[d]);
      TESSEL_CHECK(i >= 0 && i < double(n.extents[d]), "reference: read of {} out of bounds at dimension {} (index {})", *n.producer, d,
                   i);
      flat = flat * n.extents[d] + int64_t(i);
    }
    return (*n.data)[size_t(flat)];
  }

  void reduceOver(const Node& n, size_t k, double& acc) {
    if (k == n.axisSlots.size()) {
      if (n.children.size() == 3 && eval(n.children[2]) == 0) return;
      double x = eval(n.children[0]);
      acc = n.reduce == ReduceOp::Sum ? acc + x : (n.reduce == ReduceOp::Max ? std::max(acc, x) : std::min(acc, x));
      if (n.type.isIntegral()) acc = roundToType(acc, n.type);
      return;
    }
    double& var = frame_[size_t(n.axisSlots[k])];
    for (int64_t i = 0; i < n.extents[k]; ++i) {
      var = double(i);
      reduceOver(n, k + 1, acc);
    }
  }

  double eval(int index) {
    const Node& n = nodes_[size_t(index)];
    const DataType t = n.type;
    switch (n.kind) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm: return n.value;
      case ExprKind::Var: return frame_[size_t(n.slot)];
      case ExprKind::Not: return eval(n.children[0]) == 0;
      case ExprKind::Select:
      case ExprKind::IfThenElse: return eval(n.children[0]) != 0 ? eval(n.children[1]) : eval(n.children[2]);
      case ExprKind::Cast: {
        double v = eval(n.children[0]);
        if (t.isIntegral() && n.fromFloat) v = std::trunc(v);
        return roundToType(v, t);
      }
      case ExprKind::Call: {
        double x = eval(n.children[0]);
        double r = 0;
        switch (n.call) {
          case Intrinsic::Exp: r = std::exp(x); break;
          case Intrinsic::Log: r = std::log(x); break;
          case Intrinsic::Sqrt: r = std::sqrt(x); break;
          case Intrinsic::Rsqrt: r = 1 / std::sqrt(x); break;
          case Intrinsic::Tanh: r = std::tanh(x); break;
          case Intrinsic::Sigmoid: r = 1 / (1 + std::exp(-x)); break;
          case Intrinsic::Erf: r = std::erf(x); break;
          case Intrinsic::Pow: r = std::pow(x, eval(n.children[1])); break;
          case Intrinsic::Abs: r = std::fabs(x); break;
          case Intrinsic::Floor: r = std::floor(x); break;
          case Intrinsic::Ceil: r = std::ceil(x); break;
          case Intrinsic::Round: r = std::round(x); break;
        }
        return t.isFloat() ? r : roundToType(r, t);
      }
      case ExprKind::ProducerLoad: return load(n);
      case ExprKind::Reduce: {
        double acc = eval(n.children[1]);
        reduceOver(n, 0, acc);
        return acc;
      }
      default: break;
    }
    double x = eval(n.children[0]), y = eval(n.children[1]);
    double r = 0;
    switch (n.kind) {
      case ExprKind::Add: r = x + y; break;
      case ExprKind::Sub: r = x - y; break;
      case ExprKind::Mul: r = x * y; break;
      case ExprKind::Div: r = n.integralOperands ? std::trunc(x / y) : x / y; break;
      case ExprKind::Mod: r = std::fmod(x, y); break;
      case ExprKind::FloorDiv: r = std::floor(x / y); break;
      case ExprKind::FloorMod: r = x - std::floor(x / y) * y; break;
      case ExprKind::Min: r = std::min(x, y); break;
      case ExprKind::Max: r = std::max(x, y); break;
      case ExprKind::EQ: return x == y;
      case ExprKind::NE: return x != y;
      case ExprKind::LT: return x < y;
      case ExprKind::LE: return x <= y;
      case ExprKind::GT: return x > y;
      case ExprKind::GE: return x >= y;
      case ExprKind::And: return x != 0 && y != 0;
      case ExprKind::Or: return x != 0 || y != 0;
      default: break;
    }
    return n.integralOperands ? roundToType(r, t) : r;
  }

  const ComputeDAG& dag_;
  const TensorValues& values_;
  std::vector<Node> nodes_;
  std::unordered_map<const VarNode*, int> slots_;
  std::vector<double> frame_;
  std::vector<int> axisSlots_;
  int root_ = -1;
};

}  // namespace

TensorValues evaluateReference(const ComputeDAG& dag, const TensorValues& inputs) {
  TensorValues values;
  for (auto& op : dag.ops()) {
    int64_t count = 1;
    for (auto s : op->shape) count *= s;
    if (op->isPlaceholder()) {
      auto it = inputs.find(op->name);
      TESSEL_CHECK(it != inputs.end(), "reference: no value given for input '{}'", op->name);
      TESSEL_CHECK(int64_t(it->second.size()) == count, "reference: input '{}' has {} elements, expected {}", op->name,
                   it->second.size(), count);
      values[op->name] = it->second;
      continue;
    }
    CompiledBody body(dag, values, *op);
    std::vector<double> out(static_cast<size_t>(count));
    std::vector<int64_t> index(op->shape.size(), 0);
    for (int64_t flat = 0; flat < count; ++flat) {
      int64_t rem = flat;
      for (int d = int(op->shape.size()) - 1; d >= 0; --d) {
        index[size_t(d)] = rem % op->shape[size_t(d)];
        rem /= op->shape[size_t(d)];
      }
      out[size_t(flat)] = roundToType(body(index), op->dtype);
    }
    values[op->name] = std::move(out);
  }
  return values;
}

}  // namespace tessel::te
