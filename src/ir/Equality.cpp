#include "ir/Equality.h"

#include "ir/Mutator.h"

#include <cstring>
#include <functional>

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

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  // boost::hash_combine's mixing, widened to 64 bits.
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 12) + (h >> 4));
}

uint64_t hashBits(double d) {
  uint64_t bits = 0;
  if (d == 0) d = 0;  // -0.0 == 0.0 structurally
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

}  // namespace

uint64_t structuralHash(const Expr& e) {
  if (!e.defined()) return 0x5bd1e995;
  DataType t = e.type();
  uint64_t h = mix(uint64_t(e.kind()) + 1, (uint64_t(t.code) << 48) ^ (uint64_t(t.bits) << 32) ^ uint64_t(uint32_t(t.lanes)));
  switch (e.kind()) {
    case ExprKind::IntImm: return mix(h, uint64_t(e.as<IntImmNode>()->value));
    case ExprKind::FloatImm: return mix(h, hashBits(e.as<FloatImmNode>()->value));
    case ExprKind::Var: return mix(h, uint64_t(reinterpret_cast<uintptr_t>(e.get())));
    case ExprKind::Call: h = mix(h, uint64_t(e.as<CallNode>()->op)); break;
    case ExprKind::ProducerLoad: h = mix(h, std::hash<std::string>()(e.as<ProducerLoadNode>()->producer)); break;
    case ExprKind::Load: h = mix(h, uint64_t(reinterpret_cast<uintptr_t>(e.as<LoadNode>()->buffer.get()))); break;
    case ExprKind::Ramp: h = mix(h, uint64_t(e.as<RampNode>()->lanes)); break;
    case ExprKind::Broadcast: h = mix(h, uint64_t(e.as<BroadcastNode>()->lanes)); break;
    case ExprKind::Reduce: {
      auto r = e.as<ReduceNode>();
      h = mix(h, uint64_t(r->op));
      for (auto& a : r->axes) h = mix(h, uint64_t(reinterpret_cast<uintptr_t>(a.var.get())));
      break;
    }
    default: break;
  }
  forEachChild(e, [&](const Expr& c) { h = mix(h, structuralHash(c)); });
  return h;
}

}  // namespace tessel::ir
