#include "ir/Bounds.h"

#include <algorithm>

namespace tessel::ir {

namespace {

using I = Interval;

int64_t clamp128(__int128 v) {
  if (v <= __int128(I::kNegInf)) return I::kNegInf;
  if (v >= __int128(I::kPosInf)) return I::kPosInf;
  return int64_t(v);
}

int64_t addSat(int64_t a, int64_t b) {
  if (a == I::kNegInf || b == I::kNegInf) return (a == I::kPosInf || b == I::kPosInf) ? 0 : I::kNegInf;
  if (a == I::kPosInf || b == I::kPosInf) return I::kPosInf;
  return clamp128(__int128(a) + b);
}

int64_t negSat(int64_t a) {
  if (a == I::kNegInf) return I::kPosInf;
  if (a == I::kPosInf) return I::kNegInf;
  return -a;
}

int64_t mulSat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool infinite = a == I::kNegInf || a == I::kPosInf || b == I::kNegInf || b == I::kPosInf;
  if (infinite) return ((a < 0) != (b < 0)) ? I::kNegInf : I::kPosInf;
  return clamp128(__int128(a) * b);
}

int64_t floorDiv(int64_t a, int64_t c) {
  if (a == I::kNegInf || a == I::kPosInf) return c > 0 ? a : negSat(a);
  int64_t q = a / c;
  if ((a % c != 0) && ((a < 0) != (c < 0))) --q;
  return q;
}

Interval typeRange(DataType t) {
  if (t.isBool()) return {0, 1};
  if (t.isIntegral() && t.bits < 64) {
    if (t.isUInt()) return {0, (int64_t(1) << t.bits) - 1};
    return {-(int64_t(1) << (t.bits - 1)), (int64_t(1) << (t.bits - 1)) - 1};
  }
  return I::everything();
}

Interval decide(bool alwaysTrue, bool alwaysFalse) {
  if (alwaysTrue) return I::point(1);
  if (alwaysFalse) return I::point(0);
  return {0, 1};
}

}  // namespace

Interval constBounds(const Expr& e, const VarBounds& bounds) {
  if (!e.defined()) return I::everything();
  switch (e.kind()) {
    case ExprKind::IntImm: return I::point(e.as<IntImmNode>()->value);
    case ExprKind::Var: {
      auto it = bounds.find(e.as<VarNode>());
      return it == bounds.end() ? typeRange(e.type()) : it->second;
    }
    case ExprKind::Broadcast: return constBounds(e.as<BroadcastNode>()->value, bounds);
    case ExprKind::Ramp: {
      auto r = e.as<RampNode>();
      Interval base = constBounds(r->base, bounds);
      Interval stride = constBounds(r->stride, bounds);
      Interval span{std::min<int64_t>(0, mulSat(stride.min, r->lanes - 1)), std::max<int64_t>(0, mulSat(stride.max, r->lanes - 1))};
      return {addSat(base.min, span.min), addSat(base.max, span.max)};
    }
    case ExprKind::Cast: {
      auto v = e.as<CastNode>()->value;
      Interval inner = constBounds(v, bounds);
      Interval range = typeRange(e.type());
      if (e.type().isIntegral() && (v.type().isIntegral() || v.type().isBool()) && inner.min >= range.min && inner.max <= range.max)
        return inner;
      return range;
    }
    case ExprKind::Not: {
      Interval a = constBounds(e.as<NotNode>()->a, bounds);
      return decide(a.max == 0, a.min >= 1);
    }
    case ExprKind::Select:
    case ExprKind::IfThenElse: {
      auto n = static_cast<const SelectNode*>(e.get());
      Interval c = constBounds(n->condition, bounds);
      Interval t = constBounds(n->trueValue, bounds), f = constBounds(n->falseValue, bounds);
      if (c.min >= 1) return t;
      if (c.max == 0) return f;
      return {std::min(t.min, f.min), std::max(t.max, f.max)};
    }
    default: break;
  }
  if (e.kind() < ExprKind::Add || e.kind() > ExprKind::Or) return typeRange(e.type());
  auto n = static_cast<const BinaryNode*>(e.get());
  if (!n->a.type().isIntegral() && !n->a.type().isBool()) {
    return e.type().isBool() ? Interval{0, 1} : I::everything();
  }
  Interval a = constBounds(n->a, bounds), b = constBounds(n->b, bounds);
  switch (e.kind()) {
    case ExprKind::Add: return {addSat(a.min, b.min), addSat(a.max, b.max)};
    case ExprKind::Sub: return {addSat(a.min, negSat(b.max)), addSat(a.max, negSat(b.min))};
    case ExprKind::Mul: {
      int64_t c[4] = {mulSat(a.min, b.min), mulSat(a.min, b.max), mulSat(a.max, b.min), mulSat(a.max, b.max)};
      return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case ExprKind::FloorDiv:
    case ExprKind::Div: {
      if (!b.isPoint() || b.min == 0) return typeRange(e.type());
      bool trunc = e.kind() == ExprKind::Div;
      // Truncation equals flooring only for a non-negative quotient.
      if (trunc && (a.min < 0 || b.min < 0)) return typeRange(e.type());
      int64_t x = floorDiv(a.min, b.min), y = floorDiv(a.max, b.min);
      return {std::min(x, y), std::max(x, y)};
    }
    case ExprKind::FloorMod:
    case ExprKind::Mod: {
      if (!b.isPoint() || b.min <= 0) return typeRange(e.type());
      int64_t c = b.min;
      if (a.bounded() && a.min >= 0 && floorDiv(a.min, c) == floorDiv(a.max, c)) {
        int64_t k = floorDiv(a.min, c) * c;
        return {a.min - k, a.max - k};
      }
      if (e.kind() == ExprKind::Mod && a.min < 0) return {-(c - 1), c - 1};
      return {0, c - 1};
    }
    case ExprKind::Min: return {std::min(a.min, b.min), std::min(a.max, b.max)};
    case ExprKind::Max: return {std::max(a.min, b.min), std::max(a.max, b.max)};
    case ExprKind::LT: return decide(a.max < b.min, a.min >= b.max);
    case ExprKind::LE: return decide(a.max <= b.min, a.min > b.max);
    case ExprKind::GT: return decide(a.min > b.max, a.max <= b.min);
    case ExprKind::GE: return decide(a.min >= b.max, a.max < b.min);
    case ExprKind::EQ: return decide(a.isPoint() && b.isPoint() && a.min == b.min, a.max < b.min || a.min > b.max);
    case ExprKind::NE: return decide(a.max < b.min || a.min > b.max, a.isPoint() && b.isPoint() && a.min == b.min);
    case ExprKind::And: return decide(a.min >= 1 && b.min >= 1, a.max == 0 || b.max == 0);
    case ExprKind::Or: return decide(a.min >= 1 || b.min >= 1, a.max == 0 && b.max == 0);
    default: return typeRange(e.type());
  }
}

}  // namespace tessel::ir
