// The steps that add stages to the DAG: cache_read, cache_write, rfactor.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/Mutator.h"
#include "schedule/Steps.h"
#include "support/Error.h"

namespace tessel::schedule {

using nlohmann::json;
using namespace ir;

namespace {

std::string uniqueStageName(const State& state, const std::string& base) {
  std::string name = base;
  for (int k = 1; state.stageIndex(name) >= 0; ++k) name = fmt::format("{}_{}", base, k);
  return name;
}

class RenameProducer : public IRMutator {
 public:
  RenameProducer(std::string f, std::string t) : from(std::move(f)), to(std::move(t)) {}
  Expr visitProducerLoad(const Expr& e, const ProducerLoadNode* n) override {
    std::vector<Expr> idx;
    for (auto& i : n->indices) idx.push_back(mutate(i));
    return producerLoad(n->producer == from ? to : n->producer, e.type(), idx);
  }
  std::string from, to;
};

bool untouched(const State& state, const Stage& s) {
  if (!s.relations.empty()) return false;
  for (int id : s.leaves)
    if (s.iterator(id).annotation != Annotation::None || !s.iterator(id).pragmas.empty() || s.leaves[size_t(id)] != id)
      return false;
  for (auto& other : state.stages())
    if (other.attach == AttachKind::At && other.attachStage == s.name()) return false;
  return true;
}

/// A fresh stage for a new op, keeping where the old stage was computed.
Stage rebuiltStage(const Stage& old, te::Operation op) {
  Stage s = makeStage(op);
  s.attach = old.attach;
  s.attachStage = old.attachStage;
  s.attachIterator = old.attachIterator;
  return s;
}

}  // namespace

// ---- cache_read ------------------------------------------------------------------------------

CacheReadStep::CacheReadStep(std::string s, std::string sc, std::vector<std::string> r)
    : stage(std::move(s)), scope(std::move(sc)), readers(std::move(r)) {}

void CacheReadStep::apply(State& state) const {
  const Stage& source = state.stage(stage);
  TESSEL_CHECK(source.attach != AttachKind::Inline, "cache_read: '{}' is inlined", stage);
  TESSEL_CHECK(!scope.empty(), "cache_read of '{}' needs a scope name", stage);
  TESSEL_CHECK(!readers.empty(), "cache_read of '{}' needs at least one reader", stage);
  auto consumers = state.consumers(stage);
  for (auto& r : readers)
    TESSEL_CHECK(std::find(consumers.begin(), consumers.end(), r) != consumers.end(),
                 "cache_read of '{}': stage '{}' does not read it", stage, r);
  auto op = std::make_shared<te::OperationNode>();
  op->kind = te::OperationNode::Kind::Compute;
  op->name = uniqueStageName(state, stage + "." + scope);
  op->dtype = source.op->dtype;
  op->shape = source.op->shape;
  op->tag = "cache_read";
  std::vector<Expr> indices;
  for (size_t d = 0; d < op->shape.size(); ++d) {
    Var v(fmt::format("ax{}", d));
    op->axes.push_back(IterVar{v, op->shape[d]});
    indices.push_back(v);
  }
  op->body = producerLoad(stage, op->dtype, indices);
  RenameProducer rename(stage, op->name);
  for (auto& r : readers) {
    Stage& reader = state.stage(r);
    auto copy = std::make_shared<te::OperationNode>(*reader.op);
    copy->body = rename.mutate(copy->body);
    reader.op = copy;
  }
  Stage cache = makeStage(op);
  cache.memoryScope = scope;
  state.insertStage(state.stageIndex(stage) + 1, std::move(cache));
  state.inferBounds();
}

std::string CacheReadStep::print() const {
  return fmt::format("{}.cache_read(\"{}\", readers=[{}])", stage, scope, fmt::join(readers, ", "));
}
json CacheReadStep::toJson() const {
  return {{"step", "cache_read"}, {"stage", stage}, {"scope", scope}, {"readers", readers}};
}
StepPtr CacheReadStep::fromJson(const json& j) {
  return std::make_shared<CacheReadStep>(j.at("stage").get<std::string>(), j.at("scope").get<std::string>(),
                                         j.at("readers").get<std::vector<std::string>>());
}

// ---- cache_write -----------------------------------------------------------------------------

CacheWriteStep::CacheWriteStep(std::string s, std::string sc) : stage(std::move(s)), scope(std::move(sc)) {}

void CacheWriteStep::apply(State& state) const {
  Stage& s = state.stage(stage);
  TESSEL_CHECK(!s.isPlaceholder(), "cache_write: '{}' is a placeholder (an input)", stage);
  TESSEL_CHECK(s.attach != AttachKind::Inline, "cache_write: '{}' is inlined", stage);
  TESSEL_CHECK(!scope.empty(), "cache_write of '{}' needs a scope name", stage);
  TESSEL_CHECK(untouched(state, s), "cache_write on '{}' must come before other loop steps on that stage", stage);
  const auto& old = *s.op;
  // The cache stage: the old computation over fresh variables.
  auto cacheOp = std::make_shared<te::OperationNode>(old);
  cacheOp->name = uniqueStageName(state, stage + "." + scope);
  cacheOp->tag = old.tag;
  VarMap fresh;
  cacheOp->axes.clear();
  for (auto& a : old.axes) {
    Var v(a.var.name());
    fresh[a.var.node()] = v;
    cacheOp->axes.push_back(IterVar{v, a.extent});
  }
  if (auto r = old.reduction()) {
    std::vector<IterVar> axes;
    for (auto& a : r->axes) {
      Var v(a.var.name());
      fresh[a.var.node()] = v;
      axes.push_back(IterVar{v, a.extent});
    }
    Expr cond = r->condition.defined() ? substitute(r->condition, fresh) : Expr();
    cacheOp->body = reduce(r->op, substitute(r->source, fresh), axes, cond);
  } else {
    cacheOp->body = substitute(old.body, fresh);
  }
  // The stage itself now copies the cache.
  auto copyOp = std::make_shared<te::OperationNode>(old);
  std::vector<Expr> indices;
  for (auto& a : old.axes) indices.push_back(a.var);
  copyOp->body = producerLoad(cacheOp->name, old.dtype, indices);
  int index = state.stageIndex(stage);
  s = rebuiltStage(s, copyOp);
  Stage cache = makeStage(cacheOp);
  cache.memoryScope = scope;
  state.insertStage(index, std::move(cache));
  state.inferBounds();
}

std::string CacheWriteStep::print() const { return fmt::format("{}.cache_write(\"{}\")", stage, scope); }
json CacheWriteStep::toJson() const { return {{"step", "cache_write"}, {"stage", stage}, {"scope", scope}}; }
StepPtr CacheWriteStep::fromJson(const json& j) {
  return std::make_shared<CacheWriteStep>(j.at("stage").get<std::string>(), j.at("scope").get<std::string>());
}

// ---- rfactor ---------------------------------------------------------------------------------

RfactorStep::RfactorStep(std::string s, std::string i) : stage(std::move(s)), iterator(std::move(i)) {}

void RfactorStep::apply(State& state) const {
  Stage& s = state.stage(stage);
  TESSEL_CHECK(!s.isPlaceholder() && s.op->reduction(), "rfactor: '{}' is not a reduction", stage);
  TESSEL_CHECK(s.attach != AttachKind::Inline, "rfactor: '{}' is inlined", stage);
  const auto& old = *s.op;
  const auto* red = old.reduction();
  int chosen = s.leafByName(iterator);
  TESSEL_CHECK(s.iterator(chosen).kind == IteratorKind::Reduce, "rfactor: {}.{} is not a reduction iterator", stage, iterator);
  // Which root reduce axis it comes from, and how.
  int spatialCount = int(old.axes.size());
  int rootAxis = -1;
  const IterRelation* split = nullptr;
  if (chosen < s.rootCount) {
    rootAxis = chosen - spatialCount;
  } else {
    for (auto& r : s.relations)
      if (r.kind == IterRelation::Kind::Split && (r.outer == chosen || r.inner == chosen) && r.parent < s.rootCount)
        split = &r;
    TESSEL_CHECK(split != nullptr, "rfactor: {}.{} must be a reduction axis or one part of a single split of one", stage, iterator);
    rootAxis = split->parent - spatialCount;
  }
  for (auto& r : s.relations)
    TESSEL_CHECK(&r == split, "rfactor on '{}' must come before other loop steps on that stage (apart from splitting the reduction axis)", stage);
  for (auto& other : state.stages())
    TESSEL_CHECK(!(other.attach == AttachKind::At && other.attachStage == stage), "rfactor: other stages are computed inside '{}'", stage);

  state.ensureBounds();  // the extents read below
  const IterVar& k = red->axes[size_t(rootAxis)];
  int64_t factorExtent = s.iterator(chosen).extent;
  Var factorVar(s.iterator(chosen).name);
  VarMap map;
  std::vector<IterVar> remaining;
  Expr kValue;
  Expr extraCondition;
  if (!split) {
    kValue = factorVar;
  } else {
    int64_t innerExtent = s.iterator(split->inner).extent;
    bool chosenIsInner = split->inner == chosen;
    int other = chosenIsInner ? split->outer : split->inner;
    Var otherVar(s.iterator(other).name);
    remaining.push_back(IterVar{otherVar, s.iterator(other).extent});
    kValue = chosenIsInner ? Expr(otherVar) * Expr(innerExtent) + factorVar : Expr(factorVar) * Expr(innerExtent) + otherVar;
    // The split's loops overrun the axis whenever they cover more than it: with factors when
    // the factor does not divide it, with nparts also when it does (12 in 5 parts of 3 is 15).
    if (s.iterator(split->outer).extent * innerExtent > k.extent) extraCondition = kValue < Expr(k.extent);
  }
  map[k.var.node()] = kValue;
  for (size_t a = 0; a < red->axes.size(); ++a) {
    if (int(a) == rootAxis) continue;
    Var v(red->axes[a].var.name());
    map[red->axes[a].var.node()] = v;
    remaining.push_back(IterVar{v, red->axes[a].extent});
  }
  auto rfOp = std::make_shared<te::OperationNode>();
  rfOp->kind = te::OperationNode::Kind::Compute;
  rfOp->name = uniqueStageName(state, stage + ".rf");
  rfOp->dtype = old.dtype;
  rfOp->tag = "rfactor";
  rfOp->shape.push_back(factorExtent);
  rfOp->axes.push_back(IterVar{factorVar, factorExtent});
  std::vector<Expr> spatialIndices;
  for (auto& a : old.axes) {
    Var v(a.var.name());
    map[a.var.node()] = v;
    rfOp->shape.push_back(a.extent);
    rfOp->axes.push_back(IterVar{v, a.extent});
    spatialIndices.push_back(a.var);
  }
  Expr source = substitute(red->source, map);
  Expr condition = red->condition.defined() ? substitute(red->condition, map) : Expr();
  if (extraCondition.defined()) condition = condition.defined() ? (condition && extraCondition) : extraCondition;
  if (remaining.empty()) {
    rfOp->body = condition.defined() ? select(condition, source, reduceIdentity(red->op, old.dtype)) : source;
  } else {
    rfOp->body = reduce(red->op, source, remaining, condition);
  }
  // The stage now reduces the partial results over the factored axis.
  Var v(s.iterator(chosen).name + ".v");
  std::vector<Expr> rfIndices{v};
  rfIndices.insert(rfIndices.end(), spatialIndices.begin(), spatialIndices.end());
  auto finalOp = std::make_shared<te::OperationNode>(old);
  finalOp->body = reduce(red->op, producerLoad(rfOp->name, old.dtype, rfIndices), {IterVar{v, factorExtent}});
  int index = state.stageIndex(stage);
  s = rebuiltStage(s, finalOp);
  state.insertStage(index, makeStage(rfOp));
  state.inferBounds();
}

std::string RfactorStep::print() const { return fmt::format("{}.rfactor({})", stage, iterator); }
json RfactorStep::toJson() const { return {{"step", "rfactor"}, {"stage", stage}, {"iterator", iterator}}; }
StepPtr RfactorStep::fromJson(const json& j) {
  return std::make_shared<RfactorStep>(j.at("stage").get<std::string>(), j.at("iterator").get<std::string>());
}

}  // namespace tessel::schedule
