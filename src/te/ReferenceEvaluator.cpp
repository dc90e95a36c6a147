#include "te/ReferenceEvaluator.h"

#include <cmath>
#include <map>
#include <optional>
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
///
/// A read whose indices are affine in the variables and in floor quotients and remainders of
/// such sums by positive constants (what convolutions, matmuls, padding and packed layouts
/// read) computes them as integer dot products instead of walking their trees: in a
/// convolution's reduction that was most of the work (about nine tree nodes per index against
/// one or two terms). It is taken only where no intermediate of the tree could leave its type's
/// range over the variables' extents, so the tree's wrap-around never applies and both give the
/// same index.
class CompiledBody {
 public:
  CompiledBody(const ComputeDAG& dag, const TensorValues& values, const OperationNode& op) : dag_(dag), values_(values) {
    for (auto& axis : op.axes) axisSlots_.push_back(slotOf(axis.var.node(), axis.extent));
    root_ = compile(op.body);
    prepareSumOfProducts();
  }

  /// The body's values along the innermost axis at `index` (whose last entry is ignored), into
  /// `out` (that axis' extent; 1 for a rank-0 op). A body that is one reduction takes each
  /// reduction step for the whole row before the next: every element still accumulates in the
  /// reduction's own order, but a row's operands that differ along the innermost axis (a
  /// weight's output channels) are read side by side rather than a cache line or more apart,
  /// which made the element-by-element walk wait on memory for most of its time.
  void row(const std::vector<int64_t>& index, double* out, int64_t count) {
    if (axisSlots_.empty()) {
      out[0] = eval(root_);
      return;
    }
    for (size_t d = 0; d + 1 < axisSlots_.size(); ++d) frame_[size_t(axisSlots_[d])] = double(index[d]);
    const Node& n = nodes_[size_t(root_)];
    bool reduction = n.kind == ExprKind::Reduce;
    double& inner = frame_[size_t(axisSlots_.back())];
    for (int64_t j = 0; j < count; ++j) {
      inner = double(j);
      out[j] = eval(reduction ? n.children[1] : root_);
    }
    if (!reduction) return;
    if (products_) {
      sumProductsOverRow(n, index, out, count);
      return;
    }
    reduceRowOver(n, 0, out, count);
  }

 private:
  /// An integer as constant + sum of coefficient x atom, where an atom is a variable's slot
  /// (atom >= 0) or quotients_[-1 - atom].
  struct Linear {
    int64_t constant = 0;
    std::vector<std::pair<int, int64_t>> terms;
  };

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
    /// A load with affine indices (`affine`): index d is indices[d].
    bool affine = false;
    std::vector<Linear> indices;
    /// Affine, over plain variables only, and within the producer's shape for every value of
    /// the variables (from the indices' ranges): its flat index is one dot product, unchecked.
    bool flatInBounds = false;
  };

  /// The floor quotient (or remainder) of a Linear by a positive constant.
  struct Quotient {
    Linear numerator;
    int64_t divisor = 1;
    bool remainder = false;
  };
  /// A Linear being built, with the range of its value over the variables' extents (doubles:
  /// exact below 2^53, and larger ranges are refused).
  struct Affine {
    std::map<int, int64_t> coefficients;
    int64_t constant = 0;
    double lo = 0, hi = 0;
  };

  /// The slot of a variable; an `extent` binds it (an axis of the op or of a reduction).
  int slotOf(const VarNode* var, std::optional<int64_t> extent = std::nullopt) {
    auto it = slots_.find(var);
    if (it != slots_.end()) return it->second;
    TESSEL_CHECK(extent.has_value(), "reference: variable '{}' is not bound by an axis of its op", var->name);
    int slot = int(frame_.size());
    slots_.emplace(var, slot);
    frame_.push_back(0);
    slotExtents_.push_back(std::max<int64_t>(*extent, 1));
    return slot;
  }

  static Linear linearOf(const Affine& a) {
    Linear l{a.constant, {}};
    for (auto& [atom, c] : a.coefficients)
      if (c != 0) l.terms.emplace_back(atom, c);
    return l;
  }

  static Affine atom(int id, double lo, double hi) {
    Affine a;
    a.coefficients[id] = 1;
    a.lo = lo;
    a.hi = hi;
    return a;
  }

  /// `e` as an Affine, when it is one and none of its subexpressions can leave its type's range
  /// (so that the tree would never wrap around).
  std::optional<Affine> affineOf(const Expr& e) {
    DataType t = e.type();
    if (!t.isIntegral() || !t.isScalar()) return std::nullopt;
    std::optional<Affine> r;
    switch (e.kind()) {
      case ExprKind::IntImm: {
        int64_t v = e.as<IntImmNode>()->value;
        r = Affine{{}, v, double(v), double(v)};
        break;
      }
      case ExprKind::Var: {
        auto it = slots_.find(e.as<VarNode>());
        if (it == slots_.end()) return std::nullopt;  // unbound: the tree walk reports it
        r = atom(it->second, 0, double(slotExtents_[size_t(it->second)] - 1));
        break;
      }
      case ExprKind::Add:
      case ExprKind::Sub:
      case ExprKind::Mul:
      case ExprKind::FloorDiv:
      case ExprKind::FloorMod: {
        auto b = static_cast<const BinaryNode*>(e.get());
        auto x = affineOf(b->a), y = affineOf(b->b);
        if (!x || !y) return std::nullopt;
        if (e.kind() == ExprKind::FloorDiv || e.kind() == ExprKind::FloorMod) {
          if (!y->coefficients.empty() || y->constant <= 0) return std::nullopt;
          int64_t d = y->constant;
          bool remainder = e.kind() == ExprKind::FloorMod;
          quotients_.push_back({linearOf(*x), d, remainder});
          int id = -int(quotients_.size());
          r = remainder ? atom(id, 0, double(d - 1)) : atom(id, std::floor(x->lo / double(d)), std::floor(x->hi / double(d)));
        } else if (e.kind() == ExprKind::Mul) {
          if (!x->coefficients.empty() && !y->coefficients.empty()) return std::nullopt;  // not affine
          if (!x->coefficients.empty()) std::swap(x, y);
          int64_t factor = x->constant;  // x is the constant side
          for (auto& [id, c] : y->coefficients) c *= factor;
          y->constant *= factor;
          double lo = y->lo * double(factor), hi = y->hi * double(factor);
          y->lo = std::min(lo, hi);
          y->hi = std::max(lo, hi);
          r = y;
        } else {
          int64_t sign = e.kind() == ExprKind::Add ? 1 : -1;
          for (auto& [id, c] : y->coefficients) x->coefficients[id] += sign * c;
          x->constant += sign * y->constant;
          if (sign > 0) {
            x->lo += y->lo;
            x->hi += y->hi;
          } else {
            x->lo -= y->hi;
            x->hi -= y->lo;
          }
          r = x;
        }
        break;
      }
      default: return std::nullopt;
    }
    double limit = std::ldexp(1.0, 52);
    double typeLo = t.isUInt() ? 0 : -std::ldexp(1.0, t.bits - 1), typeHi = std::ldexp(1.0, t.isUInt() ? t.bits : t.bits - 1) - 1;
    if (r->lo < std::max(-limit, typeLo) || r->hi > std::min(limit, typeHi)) return std::nullopt;
    return r;
  }

  /// Makes `n` (a load) affine when every index is.
  void makeAffine(Node& n, const std::vector<Expr>& indices) {
    std::vector<Linear> forms;
    bool inBounds = true;
    for (size_t d = 0; d < indices.size(); ++d) {
      auto form = affineOf(indices[d]);
      if (!form) return;
      inBounds = inBounds && form->lo >= 0 && form->hi <= double(n.extents[d] - 1);
      for (auto& [atom, c] : form->coefficients) inBounds = inBounds && (atom >= 0 || c == 0);
      forms.push_back(linearOf(*form));
    }
    n.affine = true;
    n.indices = std::move(forms);
    n.flatInBounds = inBounds;
  }

  int64_t valueOf(const Linear& l) const {
    int64_t v = l.constant;
    for (auto [id, c] : l.terms) {
      if (id >= 0) {
        v += c * int64_t(frame_[size_t(id)]);
        continue;
      }
      const Quotient& q = quotients_[size_t(-1 - id)];
      int64_t x = valueOf(q.numerator), d = x / q.divisor;
      if (x % q.divisor != 0 && x < 0) --d;  // floor, not C's truncation
      v += c * (q.remainder ? x - d * q.divisor : d);
    }
    return v;
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
      case ExprKind::Var: n.slot = slotOf(e.as<VarNode>()); return add(std::move(n));
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
        makeAffine(n, l->indices);
        return add(std::move(n));
      }
      case ExprKind::Reduce: {
        auto r = e.as<ReduceNode>();
        n.reduce = r->op;
        for (auto& a : r->axes) {
          n.axisSlots.push_back(slotOf(a.var.node(), a.extent));
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
    if (n.affine) {
      for (size_t d = 0; d < n.indices.size(); ++d) {
        int64_t i = valueOf(n.indices[d]);
        TESSEL_CHECK(i >= 0 && i < n.extents[d], "reference: read of {} out of bounds at dimension {} (index {})", *n.producer, d, i);
        flat = flat * n.extents[d] + i;
      }
      return (*n.data)[size_t(flat)];
    }
    for (size_t d = 0; d < n.children.size(); ++d) {
      double i = eval(n.children[d]);
      TESSEL_CHECK(i >= 0 && i < double(n.extents[d]), "reference: read of {} out of bounds at dimension {} (index {})", *n.producer, d,
                   i);
      flat = flat * n.extents[d] + int64_t(i);
    }
    return (*n.data)[size_t(flat)];
  }

  /// One step of reduction `n` into `acc`, at the variables' current values.
  void accumulate(const Node& n, double& acc) {
    if (n.children.size() == 3 && eval(n.children[2]) == 0) return;
    double x = eval(n.children[0]);
    acc = n.reduce == ReduceOp::Sum ? acc + x : (n.reduce == ReduceOp::Max ? std::max(acc, x) : std::min(acc, x));
    if (n.type.isIntegral()) acc = roundToType(acc, n.type);
  }

  void reduceOver(const Node& n, size_t k, double& acc) {
    if (k == n.axisSlots.size()) {
      accumulate(n, acc);
      return;
    }
    double& var = frame_[size_t(n.axisSlots[k])];
    for (int64_t i = 0; i < n.extents[k]; ++i) {
      var = double(i);
      reduceOver(n, k + 1, acc);
    }
  }

  void reduceRowOver(const Node& n, size_t k, double* acc, int64_t count) {
    if (k == n.axisSlots.size()) {
      double& inner = frame_[size_t(axisSlots_.back())];
      for (int64_t j = 0; j < count; ++j) {
        inner = double(j);
        accumulate(n, acc[j]);
      }
      return;
    }
    double& var = frame_[size_t(n.axisSlots[k])];
    for (int64_t i = 0; i < n.extents[k]; ++i) {
      var = double(i);
      reduceRowOver(n, k + 1, acc, count);
    }
  }

  /// A load's flat index as constant + sum of coefficient x slot (every slot of the frame).
  struct FlatIndex {
    const double* data = nullptr;
    int64_t constant = 0;
    std::vector<int64_t> coefficient;
  };
  /// The sum of products of two tensors: a float reduction whose source is a * b, both loads
  /// flatInBounds (matmuls, dense layers, convolutions over a padded input, Winograd's batched
  /// product). Its steps run as two running flat indices over the reduction's variables, in the
  /// tree walk's order (reduceRowOver) and double arithmetic.
  struct SumOfProducts {
    FlatIndex a, b;
  };

  FlatIndex flatIndexOf(const Node& load) const {
    FlatIndex f;
    f.data = load.data->data();
    f.coefficient.assign(frame_.size(), 0);
    int64_t stride = 1;
    for (size_t d = load.indices.size(); d-- > 0;) {
      f.constant += load.indices[d].constant * stride;
      for (auto [slot, c] : load.indices[d].terms) f.coefficient[size_t(slot)] += c * stride;
      stride *= load.extents[d];
    }
    return f;
  }

  void prepareSumOfProducts() {
    const Node& n = nodes_[size_t(root_)];
    if (n.kind != ExprKind::Reduce || n.reduce != ReduceOp::Sum || n.children.size() != 2 || !n.type.isFloat()) return;
    const Node& product = nodes_[size_t(n.children[0])];
    if (product.kind != ExprKind::Mul || product.integralOperands || !product.type.isFloat()) return;
    const Node& a = nodes_[size_t(product.children[0])];
    const Node& b = nodes_[size_t(product.children[1])];
    for (const Node* load : {&a, &b})
      if (load->kind != ExprKind::ProducerLoad || !load->flatInBounds) return;
    products_ = SumOfProducts{flatIndexOf(a), flatIndexOf(b)};
  }

  void sumProductsOverRow(const Node& n, const std::vector<int64_t>& index, double* acc, int64_t count) {
    const SumOfProducts& p = *products_;
    int64_t a = p.a.constant, b = p.b.constant;
    for (size_t d = 0; d + 1 < axisSlots_.size(); ++d) {
      a += p.a.coefficient[size_t(axisSlots_[d])] * index[d];
      b += p.b.coefficient[size_t(axisSlots_[d])] * index[d];
    }
    sumProductsOver(n, 0, a, b, acc, count);
  }

  void sumProductsOver(const Node& n, size_t k, int64_t a, int64_t b, double* acc, int64_t count) {
    const SumOfProducts& p = *products_;
    if (k == n.axisSlots.size()) {
      size_t inner = size_t(axisSlots_.back());
      int64_t stepA = p.a.coefficient[inner], stepB = p.b.coefficient[inner];
      for (int64_t j = 0; j < count; ++j) acc[j] = acc[j] + p.a.data[a + j * stepA] * p.b.data[b + j * stepB];
      return;
    }
    size_t slot = size_t(n.axisSlots[k]);
    int64_t stepA = p.a.coefficient[slot], stepB = p.b.coefficient[slot];
    for (int64_t i = 0; i < n.extents[k]; ++i, a += stepA, b += stepB) sumProductsOver(n, k + 1, a, b, acc, count);
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
  std::vector<int64_t> slotExtents_;  ///< each slot's variable ranges over [0, extent)
  std::vector<Quotient> quotients_;
  std::vector<int> axisSlots_;
  int root_ = -1;
  std::optional<SumOfProducts> products_;
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
    int64_t width = op->shape.empty() ? 1 : op->shape.back();
    for (int64_t flat = 0; flat < count; flat += width) {
      int64_t rem = flat / width;
      for (int d = int(op->shape.size()) - 2; d >= 0; --d) {
        index[size_t(d)] = rem % op->shape[size_t(d)];
        rem /= op->shape[size_t(d)];
      }
      double* row = out.data() + flat;
      body.row(index, row, width);
      for (int64_t j = 0; j < width; ++j) row[j] = roundToType(row[j], op->dtype);
    }
    values[op->name] = std::move(out);
  }
  return values;
}

}  // namespace tessel::te
