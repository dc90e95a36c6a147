#include "ir/Equality.h"

#include "ir/Mutator.h"

namespace tessel::ir {

bool structurallyEqual(const Expr& a, const Expr& b) {
  if (a.sameAs(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.type() != b.type()) return false;
  switch (a.kind()) {
    case ExprKind::IntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ExprKind::FloatImm: return a.as<FloatImmNode>()->value == b.as<FloatImmNode>()->value;
    case ExprKind::Var: return false;  // distinct nodes are distinct variables
    case ExprKind::Call:
      if (a.as<CallNode>()->op != b.as<CallNode>()->op) return false;
      break;
    case ExprKind::ProducerLoad:
      if (a.as<ProducerLoadNode>()->producer != b.as<ProducerLoadNode>()->producer) return false;
      break;
    case ExprKind::Load:
      if (a.as<LoadNode>()->buffer != b.as<LoadNode>()->buffer) return false;
      break;
    case ExprKind::Ramp:
      if (a.as<RampNode>()->lanes != b.as<RampNode>()->lanes) return false;
      break;
    case ExprKind::Broadcast:
      if (a.as<BroadcastNode>()->lanes != b.as<BroadcastNode>()->lanes) return false;
      break;
    case ExprKind::Reduce: {
      auto x = a.as<ReduceNode>(), y = b.as<ReduceNode>();
      if (x->op != y->op || x->axes.size() != y->axes.size()) return false;
      for (size_t i = 0; i < x->axes.size(); ++i)
        if (!x->axes[i].var.sameAs(y->axes[i].var)) return false;
      break;
    }
    default: break;
  }
  std::vector<Expr> ca, cb;
  forEachChild(a, [&](const Expr& c) { ca.push_back(c); });
  forEachChild(b, [&](const Expr& c) { cb.push_back(c); });
  if (ca.size() != cb.size()) return false;
  for (size_t i = 0; i < ca.size(); ++i)
    if (!structurallyEqual(ca[i], cb[i])) return false;
  return true;
}

}  // namespace tessel::ir
