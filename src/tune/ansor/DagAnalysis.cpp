#include "tune/ansor/DagAnalysis.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/Mutator.h"
#include "schedule/BoundInference.h"

namespace tessel::tune::ansor {

using namespace schedule;
using ir::Expr;
using ir::ExprKind;

namespace {

/// Every read of another tensor in an expression: producer name -> the index lists it is read at.
std::map<std::string, std::vector<std::vector<Expr>>> readsOf(const Expr& body) {
  std::map<std::string, std::vector<std::vector<Expr>>> reads;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (auto load = e.as<ir::ProducerLoadNode>()) reads[load->producer].push_back(load->indices);
    ir::forEachChild(e, walk);
  };
  walk(body);
  return reads;
}

bool hasExpensiveMath(const Expr& body) {
  bool found = false;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (auto call = e.as<ir::CallNode>()) {
      using ir::Intrinsic;
      // Rounding and absolute value are one instruction; the rest are library calls.
      static const std::set<Intrinsic> cheap = {Intrinsic::Abs, Intrinsic::Floor, Intrinsic::Ceil, Intrinsic::Round};
      found = found || !cheap.count(call->op);
    }
    ir::forEachChild(e, walk);
  };
  walk(body);
  return found;
}

/// Arithmetic on the values (not on indices) in an expression: adds, subtractions,
/// multiplications, divisions, minima and maxima outside the index lists of loads.
int valueArithmetic(const Expr& body) {
  int count = 0;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e.as<ir::ProducerLoadNode>()) return;
    switch (e.kind()) {
      case ExprKind::Add: case ExprKind::Sub: case ExprKind::Mul: case ExprKind::Div: case ExprKind::Min: case ExprKind::Max:
        count += e.type().isFloat() ? 1 : 0;
        break;
      default: break;
    }
    ir::forEachChild(e, walk);
  };
  walk(body);
  return count;
}

/// A stage with at most this much value arithmetic is inlined even where it is reused.
constexpr int kInlinedArithmeticWithReuse = 1;

int64_t product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (auto v : values) p *= v;
  return p;
}

}  // namespace

bool readsWithReuse(const State& state, const std::string& consumer, const std::string& producer) {
  const Stage& c = state.stage(consumer);
  auto reads = readsOf(inlinedBody(state, consumer));
  auto it = reads.find(producer);
  if (it == reads.end()) return false;
  std::vector<ir::IterVar> loops = c.op->axes;
  if (auto reduce = c.op->reduction()) loops.insert(loops.end(), reduce->axes.begin(), reduce->axes.end());
  for (const auto& indices : it->second)
    for (const auto& loop : loops) {
      if (loop.extent <= 1) continue;
      bool used = false;
      for (const auto& index : indices) used = used || ir::usesVar(index, loop.var.node());
      if (!used) return true;
    }
  return false;
}

bool isStrictlyInlinable(const State& state, const std::string& stage) {
  const Stage& s = state.stage(stage);
  if (s.isPlaceholder() || state.isOutput(stage) || s.op->reduction() || hasExpensiveMath(s.op->body)) return false;
  // Inlined, a stage is recomputed at every read: where a consumer reads each element many
  // times (a GEMM reading a Winograd input transform once per output channel), only a stage
  // that selects or converts values (padding, a cast) stays cheap enough.
  if (valueArithmetic(s.op->body) <= kInlinedArithmeticWithReuse) return true;
  for (const auto& consumer : state.effectiveConsumers(stage))
    if (readsWithReuse(state, consumer, stage)) return false;
  return true;
}

int reusedInputCount(const State& state, const std::string& stage) {
  const Stage& s = state.stage(stage);
  if (s.isPlaceholder()) return 0;
  int count = 0;
  for (const auto& [producer, indexLists] : readsOf(inlinedBody(state, stage))) {
    bool missesAnAxis = false;
    for (const auto& axis : s.op->axes) {
      if (axis.extent <= 1) continue;
      bool used = false;
      for (const auto& indices : indexLists)
        for (const auto& index : indices) used = used || ir::usesVar(index, axis.var.node());
      missesAnAxis = missesAnAxis || !used;
    }
    count += missesAnAxis ? 1 : 0;
  }
  return count;
}

bool needsMultiLevelTiling(const State& state, const std::string& stage) {
  const Stage& s = state.stage(stage);
  if (s.isPlaceholder() || s.attach == AttachKind::Inline) return false;
  int reused = reusedInputCount(state, stage);
  return s.op->reduction() ? reused >= 1 : reused >= 2;
}

namespace {

/// fusibleConsumer, and with `unitIndexZero` also a read of a unit axis at the constant 0.
std::optional<std::string> elementwiseConsumer(const State& state, const std::string& stage, bool unitIndexZero) {
  auto consumers = state.effectiveConsumers(stage);
  if (consumers.size() != 1) return std::nullopt;
  const Stage& producer = state.stage(stage);
  const Stage& consumer = state.stage(consumers.front());
  if (consumer.op->reduction() || consumer.op->shape != producer.op->shape) return std::nullopt;
  auto reads = readsOf(inlinedBody(state, consumer.name()));
  auto it = reads.find(stage);
  if (it == reads.end()) return std::nullopt;
  for (const auto& indices : it->second) {
    if (indices.size() != consumer.op->axes.size()) return std::nullopt;
    for (size_t d = 0; d < indices.size(); ++d) {
      auto var = indices[d].as<ir::VarNode>();
      auto constant = ir::asConstInt(indices[d]);
      bool unitAtZero = unitIndexZero && consumer.op->axes[d].extent == 1 && constant && *constant == 0;
      if (var != consumer.op->axes[d].var.node() && !unitAtZero) return std::nullopt;
    }
  }
  return consumer.name();
}

}  // namespace

std::optional<std::string> fusibleConsumer(const State& state, const std::string& stage) {
  return elementwiseConsumer(state, stage, false);
}

std::optional<std::string> fusibleConsumerOrBroadcast(const State& state, const std::string& stage) {
  return elementwiseConsumer(state, stage, true);
}

bool needsRfactor(const State& state, const std::string& stage, int cores) {
  const Stage& s = state.stage(stage);
  if (s.isPlaceholder() || !s.op->reduction()) return false;
  int64_t spatial = product(s.op->shape);
  std::vector<int64_t> reduceExtents;
  for (const auto& axis : s.op->reduction()->axes) reduceExtents.push_back(axis.extent);
  int64_t reduce = product(reduceExtents);
  return reduce > spatial && spatial < int64_t(16) * cores && reduce > cores;
}

}  // namespace tessel::tune::ansor
