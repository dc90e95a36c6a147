#include "ir/Simplify.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "ir/Equality.h"
#include "ir/Mutator.h"
#include "support/Error.h"

namespace tessel::ir {

namespace {

bool isIndexType(DataType t) { return t == DataType::int64(); }

int64_t floorDivInt(int64_t a, int64_t c) {
  int64_t q = a / c;
  if ((a % c != 0) && ((a < 0) != (c < 0))) --q;
  return q;
}
int64_t floorModInt(int64_t a, int64_t c) { return a - floorDivInt(a, c) * c; }
bool divisionFolds(int64_t a, int64_t c) { return c != 0 && !(c == -1 && a == std::numeric_limits<int64_t>::min()); }

// Index arithmetic wraps around as the generated int64 code does (and without the undefined
// behaviour of signed overflow in the simplifier itself).
int64_t wrappingAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrappingMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

/// sum(coef * atom) + constant over int64. Like terms are found through a hash consistent
/// with structural equality, so collecting the terms of an index expression is linear in its
/// size: a step list with hundreds of nested splits makes index sums of hundreds of terms,
/// and comparing each new term with every earlier one made lowering take minutes.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;  ///< in order of first appearance; no zero coefficients after finish()
  int64_t constant = 0;

  void addTerm(const Expr& atom, int64_t coef) {
    if (coef == 0) return;
    uint64_t hash = structuralHash(atom);
    auto [first, last] = index_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      auto& term = terms[it->second];
      if (term.first.sameAs(atom) || structurallyEqual(term.first, atom)) {
        term.second = wrappingAdd(term.second, coef);
        return;
      }
    }
    index_.emplace(hash, terms.size());
    terms.emplace_back(atom, coef);
  }
  /// Adds scale * e, taking sums and products by constants apart.
  void accumulate(const Expr& e, int64_t scale) {
    if (scale == 0) return;
    if (auto i = e.as<IntImmNode>()) {
      constant = wrappingAdd(constant, wrappingMul(i->value, scale));
      return;
    }
    if (e.kind() == ExprKind::Add || e.kind() == ExprKind::Sub) {
      auto b = static_cast<const BinaryNode*>(e.get());
      accumulate(b->a, scale);
      accumulate(b->b, e.kind() == ExprKind::Add ? scale : wrappingMul(scale, -1));
      return;
    }
    if (e.kind() == ExprKind::Mul) {
      auto b = static_cast<const BinaryNode*>(e.get());
      if (auto c = b->b.as<IntImmNode>()) return accumulate(b->a, wrappingMul(scale, c->value));
      if (auto c = b->a.as<IntImmNode>()) return accumulate(b->b, wrappingMul(scale, c->value));
    }
    addTerm(e, scale);
  }
  /// Drops the terms that cancelled out.
  LinearForm& finish() {
    std::erase_if(terms, [](auto& t) { return t.second == 0; });
    index_.clear();
    for (size_t i = 0; i < terms.size(); ++i) index_.emplace(structuralHash(terms[i].first), i);
    return *this;
  }

 private:
  std::unordered_multimap<uint64_t, size_t> index_;  ///< structural hash -> position in terms
};

LinearForm toLinear(const Expr& e) {
  LinearForm f;
  f.accumulate(e, 1);
  f.finish();
  return f;
}

Expr fromLinear(const LinearForm& f) {
  Expr result;
  for (auto& [atom, coef] : f.terms) {
    if (coef == 0) continue;
    // As unsigned: the magnitude of INT64_MIN does not fit int64 (the term wraps as the
    // generated code's arithmetic does).
    int64_t magnitude = int64_t(coef < 0 ? 0 - uint64_t(coef) : uint64_t(coef));
    Expr term = magnitude == 1 ? atom : binary(ExprKind::Mul, atom, intImm(DataType::int64(), magnitude));
    if (!result.defined()) {
      result = coef < 0 ? binary(ExprKind::Sub, intImm(DataType::int64(), 0), term) : term;
    } else {
      result = binary(coef < 0 ? ExprKind::Sub : ExprKind::Add, result, term);
    }
  }
  if (!result.defined()) return intImm(DataType::int64(), f.constant);
  if (f.constant > 0) result = binary(ExprKind::Add, result, intImm(DataType::int64(), f.constant));
  if (f.constant < 0) result = binary(ExprKind::Sub, result, intImm(DataType::int64(), int64_t(0 - uint64_t(f.constant))));
  return result;
}

double floatValue(const Expr& e) { return e.as<FloatImmNode>()->value; }

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(VarBounds bounds) : bounds_(std::move(bounds)) {}

  Expr visitBinary(const Expr& e, const BinaryNode* n) override {
    // A sum of index terms is collected in one pass from its top: simplifying it bottom-up
    // would linearize every partial sum again, quadratic in the number of terms per index
    // expression (split chains of a few hundred steps made lowering take minutes).
    if (isIndexType(e.type()) && isLinearNode(e)) {
      LinearForm f;
      collectLinear(e, 1, f);
      return fromLinear(f.finish());
    }
    Expr a = mutate(n->a), b = mutate(n->b);
    Expr folded = foldConstants(e.kind(), a, b);
    if (folded.defined()) return folded;
    if (a.type().isVector()) {
      Expr v = simplifyLanes(e.kind(), a, b);
      if (v.defined()) return v;
    }
    if (isIndexType(a.type())) return simplifyIndex(e.kind(), a, b);
    if (a.type().isFloat() && a.type().isScalar()) {
      if (e.kind() == ExprKind::Add && isZero(b)) return a;
      if (e.kind() == ExprKind::Add && isZero(a)) return b;
      if (e.kind() == ExprKind::Sub && isZero(b)) return a;
      if (e.kind() == ExprKind::Mul && isOne(b)) return a;
      if (e.kind() == ExprKind::Mul && isOne(a)) return b;
      if (e.kind() == ExprKind::Div && isOne(b)) return a;
    }
    if (e.type().isBool() && (e.kind() == ExprKind::And || e.kind() == ExprKind::Or)) {
      bool isAnd = e.kind() == ExprKind::And;
      for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
        if (auto c = x.as<IntImmNode>()) return (c->value != 0) == isAnd ? y : x;
      }
    }
    if (a.sameAs(n->a) && b.sameAs(n->b)) return e;
    return binary(e.kind(), a, b);
  }

  Expr visitNot(const Expr& e, const NotNode* n) override {
    Expr a = mutate(n->a);
    if (auto c = a.as<IntImmNode>()) return intImm(e.type(), c->value == 0);
    return a.sameAs(n->a) ? e : !a;
  }

  Expr visitSelect(const Expr& e, const SelectNode* n) override {
    Expr c = mutate(n->condition);
    auto cb = constBounds(c, bounds_);
    if (c.type().isScalar() && cb.min >= 1) return mutate(n->trueValue);
    if (c.type().isScalar() && cb.max == 0) return mutate(n->falseValue);
    Expr t = mutate(n->trueValue), f = mutate(n->falseValue);
    if (c.sameAs(n->condition) && t.sameAs(n->trueValue) && f.sameAs(n->falseValue)) return e;
    return e.kind() == ExprKind::Select ? select(c, t, f) : ifThenElse(c, t, f);
  }

  Expr visitCast(const Expr& e, const CastNode* n) override {
    Expr v = mutate(n->value);
    if (e.type().isScalar()) {
      if (auto i = v.as<IntImmNode>()) return e.type().isFloat() ? floatImm(e.type(), double(i->value)) : intImm(e.type(), i->value);
      if (auto f = v.as<FloatImmNode>()) {
        if (e.type().isFloat()) return floatImm(e.type(), f->value);
        if (std::isfinite(f->value) && std::fabs(f->value) < 9e18) return intImm(e.type(), int64_t(f->value));
      }
    }
    if (isIndexType(e.type()) && v.type().isIntegral() && v.kind() == ExprKind::Cast) {
      // int64(narrow(index)) is the index itself only where the index fits the narrow type;
      // elsewhere the narrowing wraps around and must stay.
      auto inner = v.as<CastNode>()->value;
      if (isIndexType(inner.type()) && fitsIn(inner, v.type())) return inner;
    }
    return v.sameAs(n->value) ? e : cast(e.type(), v);
  }

  Stmt visitFor(const Stmt& s, const ForNode* n) override {
    Expr m = mutate(n->min), ext = mutate(n->extent);
    auto extentBounds = constBounds(ext, bounds_);
    if (extentBounds.max <= 0) return makeBlock({});
    // A loop bound to a GPU index stays: its one iteration is a guard on the other threads.
    if (extentBounds.isPoint() && extentBounds.min == 1 && n->forKind != ForKind::Parallel && !isGpuBinding(n->forKind)) {
      // The loop goes; its variable is its minimum. Replaced during this same traversal:
      // substituting first and simplifying after would rewrite the whole body once per
      // such loop (cubic for a nest of hundreds of them).
      replacements_[n->var.node()] = m;
      bounds_[n->var.node()] = constBounds(m, bounds_);
      Stmt body = mutate(n->body);
      replacements_.erase(n->var.node());
      bounds_.erase(n->var.node());
      return body;
    }
    auto minBounds = constBounds(m, bounds_);
    Interval range{minBounds.min, minBounds.max};
    if (minBounds.bounded() && extentBounds.boundedAbove()) range.max = minBounds.max + extentBounds.max - 1;
    else range.max = Interval::kPosInf;
    bounds_[n->var.node()] = range;
    Stmt body = mutate(n->body);
    bounds_.erase(n->var.node());
    if (auto b = body.as<BlockNode>(); b && b->stmts.empty()) return body;
    if (m.sameAs(n->min) && ext.sameAs(n->extent) && body.sameAs(n->body)) return s;
    return makeFor(n->var, m, ext, n->forKind, body);
  }

  Stmt visitIf(const Stmt& s, const IfThenElseNode* n) override {
    Expr c = mutate(n->condition);
    auto cb = constBounds(c, bounds_);
    if (cb.min >= 1) return mutate(n->thenCase);
    if (cb.max == 0) return n->elseCase.defined() ? mutate(n->elseCase) : makeBlock({});
    Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
    if (c.sameAs(n->condition) && t.sameAs(n->thenCase) && e.sameAs(n->elseCase)) return s;
    return makeIf(c, t, e);
  }

 private:
  /// True if every value the bounds allow for `e` is representable in the integer `type`.
  bool fitsIn(const Expr& e, DataType type) const {
    Interval b = constBounds(e, bounds_);
    if (type.bits >= 64) return type.isInt() || b.min >= 0;
    int64_t lo = type.isUInt() ? 0 : -(int64_t(1) << (type.bits - 1));
    int64_t hi = type.isUInt() ? (int64_t(1) << type.bits) - 1 : (int64_t(1) << (type.bits - 1)) - 1;
    return b.min >= lo && b.max <= hi;
  }

  /// Add, Sub, or a product with a literal constant: a node of a linear index sum.
  static bool isLinearNode(const Expr& e) {
    if (e.kind() == ExprKind::Add || e.kind() == ExprKind::Sub) return true;
    if (e.kind() != ExprKind::Mul) return false;
    auto b = static_cast<const BinaryNode*>(e.get());
    return b->a.as<IntImmNode>() || b->b.as<IntImmNode>();
  }

  /// Adds scale * e to f: sums and literal products are taken apart as they are, every other
  /// node is simplified first and then added (a simplified atom may itself be a sum).
  void collectLinear(const Expr& e, int64_t scale, LinearForm& f) {
    if (isIndexType(e.type()) && isLinearNode(e)) {
      auto b = static_cast<const BinaryNode*>(e.get());
      if (e.kind() == ExprKind::Mul) {
        auto c = b->a.as<IntImmNode>() ? b->a.as<IntImmNode>() : b->b.as<IntImmNode>();
        collectLinear(b->a.as<IntImmNode>() ? b->b : b->a, wrappingMul(scale, c->value), f);
        return;
      }
      collectLinear(b->a, scale, f);
      collectLinear(b->b, e.kind() == ExprKind::Add ? scale : wrappingMul(scale, -1), f);
      return;
    }
    f.accumulate(mutate(e), scale);
  }

  static bool isZero(const Expr& e) { return e.as<FloatImmNode>() && floatValue(e) == 0.0; }
  static bool isOne(const Expr& e) { return e.as<FloatImmNode>() && floatValue(e) == 1.0; }

  /// Ramp and broadcast arithmetic: ramp(b, s) + broadcast(x) = ramp(b + x, s), and so on,
  /// so that vector indices stay ramps the code generator can load densely.
  Expr simplifyLanes(ExprKind k, const Expr& a, const Expr& b) {
    auto ra = a.as<RampNode>(), rb = b.as<RampNode>();
    auto ba = a.as<BroadcastNode>(), bb = b.as<BroadcastNode>();
    int lanes = a.type().lanes;
    if (ba && bb) return broadcast(mutate(binary(k, ba->value, bb->value)), lanes);
    if (k == ExprKind::Add || k == ExprKind::Sub) {
      if (ra && bb) return ramp(mutate(binary(k, ra->base, bb->value)), ra->stride, lanes);
      if (ba && rb && k == ExprKind::Add) return ramp(mutate(ba->value + rb->base), rb->stride, lanes);
      if (ra && rb) return ramp(mutate(binary(k, ra->base, rb->base)), mutate(binary(k, ra->stride, rb->stride)), lanes);
    }
    if (k == ExprKind::Mul) {
      if (ra && bb) return ramp(mutate(ra->base * bb->value), mutate(ra->stride * bb->value), lanes);
      if (ba && rb) return ramp(mutate(rb->base * ba->value), mutate(rb->stride * ba->value), lanes);
    }
    // A dense ramp starting at a multiple of its lanes lies within one block of c when the lanes
    // divide c: its quotient is one value, its remainder a dense ramp (a fused copy's element
    // index taken apart into a row and a column, four columns at a time).
    if ((k == ExprKind::FloorDiv || k == ExprKind::FloorMod) && ra && bb && isConstInt(ra->stride, 1)) {
      auto c = bb->value.as<IntImmNode>();
      int64_t start = knownDivisor(ra->base);
      if (c && c->value > 0 && c->value % lanes == 0 && (start == 0 || start % lanes == 0)) {
        Expr base = mutate(binary(k, ra->base, bb->value));
        return k == ExprKind::FloorDiv ? broadcast(base, lanes) : ramp(base, ra->stride, lanes);
      }
    }
    return Expr();
  }

  Expr visitRamp(const Expr& e, const RampNode* n) override {
    Expr base = mutate(n->base), stride = mutate(n->stride);
    if (isConstInt(stride, 0)) return broadcast(base, n->lanes);
    return base.sameAs(n->base) && stride.sameAs(n->stride) ? e : ramp(base, stride, n->lanes);
  }

  Expr foldConstants(ExprKind k, const Expr& a, const Expr& b) {
    auto ia = a.as<IntImmNode>(), ib = b.as<IntImmNode>();
    DataType t = a.type();
    if (ia && ib) {
      int64_t x = ia->value, y = ib->value;
      switch (k) {
        case ExprKind::Add: return intImm(t, int64_t(uint64_t(x) + uint64_t(y)));
        case ExprKind::Sub: return intImm(t, int64_t(uint64_t(x) - uint64_t(y)));
        case ExprKind::Mul: return intImm(t, int64_t(uint64_t(x) * uint64_t(y)));
        // Division by zero and INT64_MIN / -1 trap on the host: leave them to the target.
        case ExprKind::FloorDiv: if (divisionFolds(x, y)) return intImm(t, floorDivInt(x, y)); break;
        case ExprKind::FloorMod: if (divisionFolds(x, y)) return intImm(t, floorModInt(x, y)); break;
        case ExprKind::Div: if (divisionFolds(x, y)) return intImm(t, x / y); break;
        case ExprKind::Mod: if (divisionFolds(x, y)) return intImm(t, x % y); break;
        case ExprKind::Min: return intImm(t, std::min(x, y));
        case ExprKind::Max: return intImm(t, std::max(x, y));
        case ExprKind::EQ: return intImm(DataType::boolean(), x == y);
        case ExprKind::NE: return intImm(DataType::boolean(), x != y);
        case ExprKind::LT: return intImm(DataType::boolean(), x < y);
        case ExprKind::LE: return intImm(DataType::boolean(), x <= y);
        case ExprKind::GT: return intImm(DataType::boolean(), x > y);
        case ExprKind::GE: return intImm(DataType::boolean(), x >= y);
        case ExprKind::And: return intImm(t, x && y);
        case ExprKind::Or: return intImm(t, x || y);
        default: break;
      }
    }
    auto fa = a.as<FloatImmNode>(), fb = b.as<FloatImmNode>();
    if (fa && fb) {
      double x = fa->value, y = fb->value;
      switch (k) {
        case ExprKind::Add: return floatImm(t, x + y);
        case ExprKind::Sub: return floatImm(t, x - y);
        case ExprKind::Mul: return floatImm(t, x * y);
        case ExprKind::Div: return floatImm(t, x / y);
        case ExprKind::Min: return floatImm(t, std::min(x, y));
        case ExprKind::Max: return floatImm(t, std::max(x, y));
        case ExprKind::LT: return intImm(DataType::boolean(), x < y);
        case ExprKind::LE: return intImm(DataType::boolean(), x <= y);
        case ExprKind::GT: return intImm(DataType::boolean(), x > y);
        case ExprKind::GE: return intImm(DataType::boolean(), x >= y);
        case ExprKind::EQ: return intImm(DataType::boolean(), x == y);
        case ExprKind::NE: return intImm(DataType::boolean(), x != y);
        default: break;
      }
    }
    return Expr();
  }

  Expr simplifyIndex(ExprKind k, const Expr& a, const Expr& b) {
    switch (k) {
      case ExprKind::Add:
      case ExprKind::Sub:
      case ExprKind::Mul: {
        if (k == ExprKind::Mul && !a.as<IntImmNode>() && !b.as<IntImmNode>()) break;
        return fromLinear(toLinear(binary(k, a, b)));
      }
      case ExprKind::FloorDiv:
      case ExprKind::FloorMod:
      case ExprKind::Div:
      case ExprKind::Mod: {
        auto c = b.as<IntImmNode>();
        if (!c || c->value <= 0) break;
        bool truncating = k == ExprKind::Div || k == ExprKind::Mod;
        if (truncating && constBounds(a, bounds_).min < 0) break;
        return simplifyDivMod(k == ExprKind::FloorDiv || k == ExprKind::Div, a, c->value);
      }
      case ExprKind::Min:
      case ExprKind::Max: {
        auto d = constBounds(fromLinear(toLinear(a - b)), bounds_);
        bool isMin = k == ExprKind::Min;
        if (d.max <= 0) return isMin ? a : b;
        if (d.min >= 0) return isMin ? b : a;
        break;
      }
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE:
      case ExprKind::EQ:
      case ExprKind::NE: {
        LinearForm diff = toLinear(a - b);
        auto d = constBounds(fromLinear(diff), bounds_);
        Interval verdict;
        switch (k) {
          case ExprKind::LT: verdict = {d.max < 0 ? 1 : 0, d.min < 0 ? 1 : 0}; break;
          case ExprKind::LE: verdict = {d.max <= 0 ? 1 : 0, d.min <= 0 ? 1 : 0}; break;
          case ExprKind::GT: verdict = {d.min > 0 ? 1 : 0, d.max > 0 ? 1 : 0}; break;
          case ExprKind::GE: verdict = {d.min >= 0 ? 1 : 0, d.max >= 0 ? 1 : 0}; break;
          case ExprKind::EQ: verdict = {d.isPoint() && d.min == 0 ? 1 : 0, (d.min <= 0 && d.max >= 0) ? 1 : 0}; break;
          default: verdict = {(d.min > 0 || d.max < 0) ? 1 : 0, d.isPoint() && d.min == 0 ? 0 : 1}; break;
        }
        if (verdict.min == 1) return intImm(DataType::boolean(), 1);
        if (verdict.max == 0) return intImm(DataType::boolean(), 0);
        // Against a constant, the constant of the other side moves over: guards of split
        // tails read `i < 5`, not `(i + 32) < 37`.
        LinearForm la = toLinear(a), lb = toLinear(b);
        if (lb.terms.empty() && la.constant != 0) {
          int64_t bound = lb.constant - la.constant;
          la.constant = 0;
          return binary(k, fromLinear(la), intImm(DataType::int64(), bound));
        }
        break;
      }
      default: break;
    }
    return binary(k, a, b);
  }

  /// floor(a / c) or a mod c for a constant c > 0, pulling out the multiples of c.
  Expr simplifyDivMod(bool isDiv, const Expr& a, int64_t c) {
    if (c == 1) return isDiv ? a : intImm(DataType::int64(), 0);
    // floordiv(floordiv(x, p), q) = floordiv(x, p*q)
    if (isDiv && a.kind() == ExprKind::FloorDiv) {
      auto inner = static_cast<const BinaryNode*>(a.get());
      if (auto p = inner->b.as<IntImmNode>(); p && p->value > 0) return simplifyDivMod(true, inner->a, p->value * c);
    }
    LinearForm f = toLinear(a);
    LinearForm quotient, rest;
    for (auto& [atom, coef] : f.terms) {
      if (coef % c == 0) quotient.addTerm(atom, coef / c);
      else rest.addTerm(atom, coef);
    }
    quotient.constant = floorDivInt(f.constant, c);
    rest.constant = floorModInt(f.constant, c);
    Expr restExpr = fromLinear(rest);
    auto rb = constBounds(restExpr, bounds_);
    if (rb.bounded() && floorDivInt(rb.min, c) == floorDivInt(rb.max, c)) {
      int64_t k = floorDivInt(rb.min, c);
      if (isDiv) {
        quotient.constant += k;
        return fromLinear(quotient);
      }
      rest.constant -= k * c;
      return fromLinear(rest);
    }
    Expr cExpr = intImm(DataType::int64(), c);
    if (!isDiv) return binary(ExprKind::FloorMod, restExpr, cExpr);
    // Keep a single floordiv node when nothing could be pulled out.
    if (quotient.terms.empty() && quotient.constant == 0) return binary(ExprKind::FloorDiv, restExpr, cExpr);
    quotient.addTerm(binary(ExprKind::FloorDiv, restExpr, cExpr), 1);
    return fromLinear(quotient);
  }

  Expr visitVar(const Expr& e, const VarNode* n) override {
    auto it = replacements_.find(n);
    return it == replacements_.end() ? e : it->second;
  }

  VarBounds bounds_;
  std::unordered_map<const VarNode*, Expr> replacements_;  ///< variables of removed one-iteration loops
};

}  // namespace

Expr simplify(const Expr& e, const VarBounds& bounds) { return Simplifier(bounds).mutate(e); }
Stmt simplify(const Stmt& s, const VarBounds& bounds) { return Simplifier(bounds).mutate(s); }

LinearSum linearSum(const Expr& e) {
  LinearForm f = toLinear(e);
  return {std::move(f.terms), f.constant};
}

int64_t knownDivisor(const Expr& e) {
  LinearForm f = toLinear(e);
  int64_t divisor = f.constant < 0 ? -f.constant : f.constant;
  for (auto& [atom, coef] : f.terms) {
    // An atom's own divisor: a remainder by c keeps what divides both its dividend and c (a
    // fused copy index taken apart: (4t) mod 64 is a multiple of 4).
    int64_t own = 1;
    if (atom.kind() == ExprKind::FloorMod || atom.kind() == ExprKind::Mod) {
      auto remainder = static_cast<const BinaryNode*>(atom.get());
      if (auto c = remainder->b.as<IntImmNode>(); c && c->value > 0) own = std::gcd(knownDivisor(remainder->a), c->value);
    }
    divisor = std::gcd(divisor, own * (coef < 0 ? -coef : coef));
  }
  return divisor;
}

bool proveTrue(const Expr& condition, const VarBounds& bounds) {
  Expr s = simplify(condition, bounds);
  return constBounds(s, bounds).min >= 1;
}

}  // namespace tessel::ir
