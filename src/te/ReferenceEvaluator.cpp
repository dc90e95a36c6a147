#include "te/ReferenceEvaluator.h"

#include <cmath>
#include <functional>
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

struct Evaluator {
  const ComputeDAG& dag;
  TensorValues& values;
  std::unordered_map<const VarNode*, double> env;

  double tensorRead(const std::string& name, const std::vector<Expr>& indices) {
    const auto& op = *dag.op(name);
    int64_t flat = 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      double i = eval(indices[d]);
      TESSEL_CHECK(i >= 0 && i < double(op.shape[d]), "reference: read of {} out of bounds at dimension {} (index {})", name, d, i);
      flat = flat * op.shape[d] + int64_t(i);
    }
    return values.at(name)[size_t(flat)];
  }

  double eval(const Expr& e) {
    DataType t = e.type();
    switch (e.kind()) {
      case ExprKind::IntImm: return double(e.as<IntImmNode>()->value);
      case ExprKind::FloatImm: return e.as<FloatImmNode>()->value;
      case ExprKind::Var: return env.at(e.as<VarNode>());
      case ExprKind::Not: return eval(e.as<NotNode>()->a) == 0;
      case ExprKind::Select:
      case ExprKind::IfThenElse: {
        auto n = static_cast<const SelectNode*>(e.get());
        return eval(n->condition) != 0 ? eval(n->trueValue) : eval(n->falseValue);
      }
      case ExprKind::Cast: {
        double v = eval(e.as<CastNode>()->value);
        if (t.isIntegral() && e.as<CastNode>()->value.type().isFloat()) v = std::trunc(v);
        return roundToType(v, t);
      }
      case ExprKind::Call: {
        auto n = e.as<CallNode>();
        double x = eval(n->args[0]);
        double r = 0;
        switch (n->op) {
          case Intrinsic::Exp: r = std::exp(x); break;
          case Intrinsic::Log: r = std::log(x); break;
          case Intrinsic::Sqrt: r = std::sqrt(x); break;
          case Intrinsic::Rsqrt: r = 1 / std::sqrt(x); break;
          case Intrinsic::Tanh: r = std::tanh(x); break;
          case Intrinsic::Sigmoid: r = 1 / (1 + std::exp(-x)); break;
          case Intrinsic::Erf: r = std::erf(x); break;
          case Intrinsic::Pow: r = std::pow(x, eval(n->args[1])); break;
          case Intrinsic::Abs: r = std::fabs(x); break;
          case Intrinsic::Floor: r = std::floor(x); break;
          case Intrinsic::Ceil: r = std::ceil(x); break;
          case Intrinsic::Round: r = std::round(x); break;
        }
        return t.isFloat() ? r : roundToType(r, t);
      }
      case ExprKind::ProducerLoad: {
        auto n = e.as<ProducerLoadNode>();
        return tensorRead(n->producer, n->indices);
      }
      case ExprKind::Reduce: {
        auto r = e.as<ReduceNode>();
        double acc = eval(reduceIdentity(r->op, t));
        std::function<void(size_t)> loop = [&](size_t k) {
          if (k == r->axes.size()) {
            if (r->condition.defined() && eval(r->condition) == 0) return;
            double x = eval(r->source);
            acc = r->op == ReduceOp::Sum ? acc + x : (r->op == ReduceOp::Max ? std::max(acc, x) : std::min(acc, x));
            if (t.isIntegral()) acc = roundToType(acc, t);
            return;
          }
          for (int64_t i = 0; i < r->axes[k].extent; ++i) {
            env[r->axes[k].var.node()] = double(i);
            loop(k + 1);
          }
        };
        loop(0);
        return acc;
      }
      default: break;
    }
    TESSEL_CHECK(e.kind() >= ExprKind::Add && e.kind() <= ExprKind::Or, "reference: cannot evaluate expression kind {}", int(e.kind()));
    auto b = static_cast<const BinaryNode*>(e.get());
    double x = eval(b->a), y = eval(b->b);
    bool integral = b->a.type().isIntegral();
    double r = 0;
    switch (e.kind()) {
      case ExprKind::Add: r = x + y; break;
      case ExprKind::Sub: r = x - y; break;
      case ExprKind::Mul: r = x * y; break;
      case ExprKind::Div: r = integral ? std::trunc(x / y) : x / y; break;
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
    return integral ? roundToType(r, t) : r;
  }
};

}  // namespace

TensorValues evaluateReference(const ComputeDAG& dag, const TensorValues& inputs) {
  TensorValues values;
  Evaluator ev{dag, values, {}};
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
    std::vector<double> out(static_cast<size_t>(count));
    std::vector<int64_t> index(op->shape.size(), 0);
    for (int64_t flat = 0; flat < count; ++flat) {
      int64_t rem = flat;
      for (int d = int(op->shape.size()) - 1; d >= 0; --d) {
        index[size_t(d)] = rem % op->shape[size_t(d)];
        rem /= op->shape[size_t(d)];
      }
      for (size_t d = 0; d < op->axes.size(); ++d) ev.env[op->axes[d].var.node()] = double(index[d]);
      out[size_t(flat)] = roundToType(ev.eval(op->body), op->dtype);
    }
    values[op->name] = std::move(out);
  }
  return values;
}

}  // namespace tessel::te
