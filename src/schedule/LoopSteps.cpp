// The steps that reshape one stage's loops: split, follow_split, follow_fused_split, fuse, reorder, annotate, pragma,
// tensorize, double_buffer, storage_align.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "ir/Stmt.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "support/Json.h"

namespace tessel::schedule {

using nlohmann::json;

namespace {

Stage& computeStage(State& state, const std::string& name) {
  Stage& s = state.stage(name);
  TESSEL_CHECK(!s.isPlaceholder(), "stage '{}' is a placeholder (an input) and has no loops", name);
  TESSEL_CHECK(s.attach != AttachKind::Inline, "stage '{}' is inlined and has no loops", name);
  return s;
}

/// Stages attached at `from` now attach at `to`.
void moveAttachments(State& state, const std::string& stage, int from, int to) {
  for (auto& s : state.stages())
    if (s.attach == AttachKind::At && s.attachStage == stage && s.attachIterator == from) s.attachIterator = to;
}

int addIterator(Stage& s, std::string name, IteratorKind kind) {
  std::set<std::string> taken;
  for (auto& it : s.iterators) taken.insert(it.name);
  std::string unique = name;
  for (int k = 1; taken.count(unique); ++k) unique = fmt::format("{}_{}", name, k);
  Iterator it;
  it.id = int(s.iterators.size());
  it.name = unique;
  it.kind = kind;
  s.iterators.push_back(it);
  return it.id;
}

}  // namespace

// ---- split -----------------------------------------------------------------------------------

SplitStep::SplitStep(std::string s, std::string i, std::vector<int64_t> f, int64_t n)
    : stage(std::move(s)), iterator(std::move(i)), factors(std::move(f)), nparts(n) {}

void SplitStep::apply(State& state) const {
  Stage& s = computeStage(state, stage);
  int parent = s.leafByName(iterator);
  // The sign first: a negative nparts is a bad value, not a missing one.
  TESSEL_CHECK(nparts >= 0, "split of {}.{}: nparts must be positive, got {}", stage, iterator, nparts);
  TESSEL_CHECK(nparts > 0 || !factors.empty(), "split of {}.{} needs factors or nparts", stage, iterator);
  TESSEL_CHECK(nparts == 0 || factors.empty(), "split of {}.{} takes either factors or nparts, not both", stage, iterator);
  for (auto f : factors) TESSEL_CHECK(f > 0, "split of {}.{}: factor must be positive, got {}", stage, iterator, f);
  // Extents are computed as (extent + factor - 1) / factor: absurd values from a corrupt record
  // must fail here rather than overflow there.
  constexpr int64_t kMaxSplit = int64_t(1) << 32;
  TESSEL_CHECK(nparts <= kMaxSplit, "split of {}.{}: nparts {} is beyond 2^32", stage, iterator, nparts);
  int64_t product = 1;
  for (auto f : factors) {
    TESSEL_CHECK(f <= kMaxSplit / product, "split of {}.{}: factors [{}] multiply past 2^32", stage, iterator, fmt::join(factors, ", "));
    product *= f;
  }
  IteratorKind kind = s.iterator(parent).kind;
  std::string base = s.iterator(parent).name;
  int position = s.leafPosition(parent);
  std::vector<int> created;
  if (nparts > 0) {
    int outer = addIterator(s, base + ".0", kind);
    int inner = addIterator(s, base + ".1", kind);
    s.relations.push_back({IterRelation::Kind::Split, parent, outer, inner, -1, 0, nparts});
    created = {outer, inner};
  } else {
    // Multi-level: base.0 (outermost) ... base.n, as binary splits: the parent splits into
    // base.0 and a rest covering all inner levels, the rest into base.1 and a smaller rest, ...
    int levels = int(factors.size()) + 1;
    std::vector<int> ids;
    for (int l = 0; l < levels; ++l) ids.push_back(addIterator(s, fmt::format("{}.{}", base, l), kind));
    int current = parent;
    for (int l = 0; l + 1 < levels; ++l) {
      int64_t innerProduct = 1;
      for (size_t k = size_t(l); k < factors.size(); ++k) innerProduct *= factors[k];
      int rest = (l + 2 == levels) ? ids[size_t(l + 1)] : addIterator(s, fmt::format("{}.rest{}", base, l), kind);
      s.relations.push_back({IterRelation::Kind::Split, current, ids[size_t(l)], rest, -1, innerProduct, 0});
      current = rest;
    }
    created = ids;
  }
  s.leaves.erase(s.leaves.begin() + position);
  s.leaves.insert(s.leaves.begin() + position, created.begin(), created.end());
  moveAttachments(state, stage, parent, created.back());
  state.inferBounds();
}

std::string SplitStep::print() const {
  if (nparts > 0) return fmt::format("{}.split({}, nparts={})", stage, iterator, nparts);
  return fmt::format("{}.split({}, factors=[{}])", stage, iterator, fmt::join(factors, ", "));
}

json SplitStep::toJson() const {
  json j{{"step", "split"}, {"stage", stage}, {"iterator", iterator}};
  if (nparts > 0) j["nparts"] = nparts;
  else j["factors"] = factors;
  return j;
}

StepPtr SplitStep::fromJson(const json& j) {
  // Factors and nparts must be integers as written: 8.5 or 1e23 is an error here, not a
  // truncated or wrapped-around factor later.
  std::vector<int64_t> factors = j.contains("factors") ? jsonIntegers(j["factors"], "factors") : std::vector<int64_t>{};
  int64_t nparts = j.contains("nparts") ? jsonInteger(j["nparts"], "nparts") : 0;
  return std::make_shared<SplitStep>(j.at("stage").get<std::string>(), j.at("iterator").get<std::string>(), std::move(factors),
                                     nparts);
}

// ---- follow_split ----------------------------------------------------------------------------

namespace {

/// The factors of the multi-level split of `root` in stage `s` (outermost first), read back
/// from its chain of binary splits: the level-l split's inner extent is the product of the
/// factors from l on.
std::vector<int64_t> splitFactorsOf(const Stage& s, const std::string& root) {
  int current = -1;
  for (auto& it : s.iterators)
    if (it.name == root) current = it.id;
  TESSEL_CHECK(current >= 0, "stage '{}' has no iterator '{}' (the split to follow)", s.name(), root);
  std::vector<int64_t> products;
  for (bool more = true; more;) {
    more = false;
    for (auto& r : s.relations)
      if (r.kind == IterRelation::Kind::Split && r.parent == current) {
        TESSEL_CHECK(r.factor > 0, "{}.{} was split by nparts, not by factors", s.name(), root);
        products.push_back(r.factor);
        current = r.inner;
        more = true;
        break;
      }
  }
  TESSEL_CHECK(!products.empty(), "{}.{} was not split", s.name(), root);
  std::vector<int64_t> factors;
  for (size_t l = 0; l < products.size(); ++l)
    factors.push_back(l + 1 < products.size() ? products[l] / products[l + 1] : products[l]);
  return factors;
}

}  // namespace

FollowSplitStep::FollowSplitStep(std::string s, std::string i, std::string ss, std::string si, int64_t p)
    : stage(std::move(s)), iterator(std::move(i)), sourceStage(std::move(ss)), sourceIterator(std::move(si)), parts(p) {}

void FollowSplitStep::apply(State& state) const {
  const Stage& source = state.stage(sourceStage);
  TESSEL_CHECK(!source.isPlaceholder(), "follow_split of {}.{}: source '{}' is a placeholder", stage, iterator, sourceStage);
  std::vector<int64_t> sourceFactors = splitFactorsOf(source, sourceIterator);
  TESSEL_CHECK(parts >= 2 && parts <= int64_t(sourceFactors.size()) + 1,
               "follow_split of {}.{}: parts must be in [2, {}] (the levels of {}.{}), got {}", stage, iterator,
               sourceFactors.size() + 1, sourceStage, sourceIterator, parts);
  std::vector<int64_t> factors(sourceFactors.begin(), sourceFactors.begin() + (parts - 2));
  int64_t rest = 1;
  for (size_t l = size_t(parts - 2); l < sourceFactors.size(); ++l) rest *= sourceFactors[l];
  factors.push_back(rest);
  SplitStep(stage, iterator, std::move(factors)).apply(state);
}

std::string FollowSplitStep::print() const {
  return fmt::format("{}.follow_split({}, {}.{}, parts={})", stage, iterator, sourceStage, sourceIterator, parts);
}

json FollowSplitStep::toJson() const {
  return {{"step", "follow_split"}, {"stage", stage},  {"iterator", iterator}, {"source_stage", sourceStage},
          {"source_iterator", sourceIterator}, {"parts", parts}};
}

StepPtr FollowSplitStep::fromJson(const json& j) {
  return std::make_shared<FollowSplitStep>(j.at("stage").get<std::string>(), j.at("iterator").get<std::string>(),
                                           j.at("source_stage").get<std::string>(), j.at("source_iterator").get<std::string>(),
                                           jsonInteger(j.at("parts"), "parts"));
}

// ---- follow_fused_split ----------------------------------------------------------------------

FollowFusedSplitStep::FollowFusedSplitStep(std::string s, std::string i, std::vector<std::pair<std::string, std::string>> src,
                                           int64_t l)
    : stage(std::move(s)), iterator(std::move(i)), sources(std::move(src)), level(l) {}

void FollowFusedSplitStep::apply(State& state) const {
  TESSEL_CHECK(!sources.empty(), "follow_fused_split of {}.{} needs at least one source split", stage, iterator);
  TESSEL_CHECK(level >= 0, "follow_fused_split of {}.{}: level must not be negative, got {}", stage, iterator, level);
  int64_t product = 1;
  for (const auto& [sourceStage, sourceIterator] : sources) {
    const Stage& source = state.stage(sourceStage);
    TESSEL_CHECK(!source.isPlaceholder(), "follow_fused_split of {}.{}: source '{}' is a placeholder", stage, iterator, sourceStage);
    std::vector<int64_t> factors = splitFactorsOf(source, sourceIterator);
    TESSEL_CHECK(level < int64_t(factors.size()), "follow_fused_split of {}.{}: {}.{} has {} inner levels, no level {}", stage,
                 iterator, sourceStage, sourceIterator, factors.size(), level);
    product *= factors[size_t(level)];
  }
  SplitStep(stage, iterator, {product}).apply(state);
}

std::string FollowFusedSplitStep::print() const {
  std::vector<std::string> names;
  for (const auto& [s, i] : sources) names.push_back(s + "." + i);
  return fmt::format("{}.follow_fused_split({}, [{}], level={})", stage, iterator, fmt::join(names, ", "), level);
}

json FollowFusedSplitStep::toJson() const {
  json list = json::array();
  for (const auto& [s, i] : sources) list.push_back(json::array({s, i}));
  return {{"step", "follow_fused_split"}, {"stage", stage}, {"iterator", iterator}, {"sources", list}, {"level", level}};
}

StepPtr FollowFusedSplitStep::fromJson(const json& j) {
  const json& list = j.at("sources");
  TESSEL_CHECK(list.is_array(), "sources must be an array of [stage, iterator] pairs");
  std::vector<std::pair<std::string, std::string>> sources;
  for (size_t k = 0; k < list.size(); ++k) {
    TESSEL_CHECK(list[k].is_array() && list[k].size() == 2 && list[k][0].is_string() && list[k][1].is_string(),
                 "sources[{}] must be a [stage, iterator] pair of strings", k);
    sources.emplace_back(list[k][0].get<std::string>(), list[k][1].get<std::string>());
  }
  return std::make_shared<FollowFusedSplitStep>(j.at("stage").get<std::string>(), j.at("iterator").get<std::string>(),
                                                std::move(sources), jsonInteger(j.at("level"), "level"));
}

// ---- fuse ------------------------------------------------------------------------------------

FuseStep::FuseStep(std::string s, std::vector<std::string> i) : stage(std::move(s)), iterators(std::move(i)) {}

void FuseStep::apply(State& state) const {
  Stage& s = computeStage(state, stage);
  TESSEL_CHECK(iterators.size() >= 2, "fuse on stage '{}' needs at least two iterators", stage);
  std::vector<int> ids;
  for (auto& n : iterators) ids.push_back(s.leafByName(n));
  int first = s.leafPosition(ids[0]);
  for (size_t k = 1; k < ids.size(); ++k) {
    TESSEL_CHECK(s.leafPosition(ids[k]) == first + int(k),
                 "fuse on stage '{}': iterators {} and {} are not adjacent in the loop order", stage, iterators[k - 1],
                 iterators[k]);
    TESSEL_CHECK(s.iterator(ids[k]).kind == s.iterator(ids[0]).kind,
                 "fuse on stage '{}': cannot fuse spatial and reduction iterators ({} and {})", stage, iterators[0],
                 iterators[k]);
  }
  int current = ids[0];
  for (size_t k = 1; k < ids.size(); ++k) {
    std::string name = s.iterator(current).name + "@" + s.iterator(ids[k]).name;
    int fused = addIterator(s, name, s.iterator(ids[0]).kind);
    s.relations.push_back({IterRelation::Kind::Fuse, -1, current, ids[k], fused, 0, 0});
    moveAttachments(state, stage, current, fused);
    moveAttachments(state, stage, ids[k], fused);
    current = fused;
  }
  s.leaves.erase(s.leaves.begin() + first, s.leaves.begin() + first + int(ids.size()));
  s.leaves.insert(s.leaves.begin() + first, current);
  state.inferBounds();
}

std::string FuseStep::print() const { return fmt::format("{}.fuse({})", stage, fmt::join(iterators, ", ")); }
json FuseStep::toJson() const { return {{"step", "fuse"}, {"stage", stage}, {"iterators", iterators}}; }
StepPtr FuseStep::fromJson(const json& j) {
  return std::make_shared<FuseStep>(j.at("stage").get<std::string>(), j.at("iterators").get<std::vector<std::string>>());
}

// ---- reorder ---------------------------------------------------------------------------------

ReorderStep::ReorderStep(std::string s, std::vector<std::string> o) : stage(std::move(s)), order(std::move(o)) {}

void ReorderStep::apply(State& state) const {
  Stage& s = computeStage(state, stage);
  std::vector<int> ids, positions;
  std::set<std::string> seen;
  for (auto& n : order) {
    TESSEL_CHECK(seen.insert(n).second, "reorder on stage '{}' names iterator '{}' twice", stage, n);
    ids.push_back(s.leafByName(n));
    positions.push_back(s.leafPosition(ids.back()));
  }
  std::sort(positions.begin(), positions.end());
  for (size_t k = 0; k < ids.size(); ++k) s.leaves[size_t(positions[k])] = ids[k];
  state.inferBounds();
}

std::string ReorderStep::print() const { return fmt::format("{}.reorder({})", stage, fmt::join(order, ", ")); }
json ReorderStep::toJson() const { return {{"step", "reorder"}, {"stage", stage}, {"order", order}}; }
StepPtr ReorderStep::fromJson(const json& j) {
  return std::make_shared<ReorderStep>(j.at("stage").get<std::string>(), j.at("order").get<std::vector<std::string>>());
}

// ---- annotate --------------------------------------------------------------------------------

AnnotateStep::AnnotateStep(std::string s, std::string i, Annotation a) : stage(std::move(s)), iterator(std::move(i)), annotation(a) {}

void AnnotateStep::apply(State& state) const {
  Stage& s = computeStage(state, stage);
  Iterator& it = s.iterator(s.leafByName(iterator));
  bool reduce = it.kind == IteratorKind::Reduce;
  if (annotation == Annotation::Parallel || annotation == Annotation::Vectorize || annotation >= Annotation::VThread)
    TESSEL_CHECK(!reduce, "cannot {} reduction iterator {}.{}: its iterations accumulate into the same element",
                 annotationName(annotation), stage, iterator);
  if (annotation == Annotation::Vectorize) {
    // While bounds are deferred (a replay), the extent is not read here: the inference at the
    // end, which this asks for, checks every vectorized loop, and a failure there replays the
    // list step by step, which names this step. Inferring the bounds here took 40% of the
    // auto-scheduler's search.
    if (state.boundsDeferred()) state.inferBounds();
    else State::checkVectorizable(s, it);
  }
  it.annotation = annotation;
}

std::string AnnotateStep::print() const { return fmt::format("{}.{}({})", stage, annotationName(annotation), iterator); }
json AnnotateStep::toJson() const {
  return {{"step", "annotate"}, {"stage", stage}, {"iterator", iterator}, {"annotation", annotationName(annotation)}};
}
StepPtr AnnotateStep::fromJson(const json& j) {
  return std::make_shared<AnnotateStep>(j.at("stage").get<std::string>(), j.at("iterator").get<std::string>(),
                                        parseAnnotation(j.at("annotation").get<std::string>()));
}

// ---- pragma ----------------------------------------------------------------------------------

PragmaStep::PragmaStep(std::string s, std::string i, std::string k, std::string v)
    : stage(std::move(s)), iterator(std::move(i)), key(std::move(k)), value(std::move(v)) {}

void PragmaStep::apply(State& state) const {
  Stage& s = computeStage(state, stage);
  Iterator& it = s.iterator(s.leafByName(iterator));
  TESSEL_CHECK(!key.empty(), "pragma on {}.{} has an empty key", stage, iterator);
  if (key == "auto_unroll_max_step") {
    int64_t v = -1;
    try {
      v = std::stoll(value);
    } catch (...) {
    }
    TESSEL_CHECK(v >= 0, "pragma auto_unroll_max_step on {}.{} needs a non-negative integer, got '{}'", stage, iterator, value);
  }
  it.pragmas.emplace_back(key, value);
}

std::string PragmaStep::print() const { return fmt::format("{}.pragma({}, \"{}\", {})", stage, iterator, key, value); }
json PragmaStep::toJson() const {
  return {{"step", "pragma"}, {"stage", stage}, {"iterator", iterator}, {"key", key}, {"value", value}};
}
StepPtr PragmaStep::fromJson(const json& j) {
  return std::make_shared<PragmaStep>(j.at("stage").get<std::string>(), j.at("iterator").get<std::string>(),
                                      j.at("key").get<std::string>(), j.at("value").get<std::string>());
}

// ---- tensorize -------------------------------------------------------------------------------

TensorizeStep::TensorizeStep(std::string s, std::string i, std::string n)
    : stage(std::move(s)), iterator(std::move(i)), intrinsic(std::move(n)) {}

void TensorizeStep::apply(State& state) const {
  state.ensureBounds();  // reads the loops' extents
  Stage& s = computeStage(state, stage);
  int leaf = s.leafByName(iterator);
  ir::parseWarpMmaIntrinsic(intrinsic);
  const Iterator& it = s.iterator(leaf);
  TESSEL_CHECK(s.op->reduction() && it.kind == IteratorKind::Reduce, "tensorize {}.{}: '{}' is not a reduction loop", stage,
               iterator, iterator);
  TESSEL_CHECK(it.extent % 8 == 0 && it.exactExtent, "tensorize {}.{}: {} reduction steps are not whole steps of 8 ({})", stage,
               iterator, it.extent, intrinsic);
  for (size_t p = size_t(s.leafPosition(leaf)) + 1; p < s.leaves.size(); ++p) {
    const Iterator& inner = s.iterator(s.leaves[p]);
    TESSEL_CHECK(inner.kind == IteratorKind::Spatial, "tensorize {}.{}: the reduction loop '{}' is inside it", stage, iterator,
                 inner.name);
    TESSEL_CHECK(inner.annotation == Annotation::None || inner.annotation == Annotation::Unroll,
                 "tensorize {}.{}: the loop '{}' inside it is {}", stage, iterator, inner.name, annotationName(inner.annotation));
  }
  for (const auto& [key, value] : it.pragmas)
    TESSEL_CHECK(key != kTensorizePragma, "tensorize {}.{}: the loop is tensorized already ({})", stage, iterator, value);
  s.iterator(leaf).pragmas.emplace_back(kTensorizePragma, intrinsic);
}

std::string TensorizeStep::print() const { return fmt::format("{}.tensorize({}, \"{}\")", stage, iterator, intrinsic); }
json TensorizeStep::toJson() const {
  return {{"step", "tensorize"}, {"stage", stage}, {"iterator", iterator}, {"intrinsic", intrinsic}};
}
StepPtr TensorizeStep::fromJson(const json& j) {
  return std::make_shared<TensorizeStep>(j.at("stage").get<std::string>(), j.at("iterator").get<std::string>(),
                                         j.at("intrinsic").get<std::string>());
}

// ---- double_buffer ---------------------------------------------------------------------------

DoubleBufferStep::DoubleBufferStep(std::string s, int n) : stage(std::move(s)), stages(n) {}

void DoubleBufferStep::apply(State& state) const {
  Stage& s = computeStage(state, stage);
  TESSEL_CHECK(s.memoryScope == "shared", "double_buffer on '{}': only a shared-memory copy (cache_read \"shared\") is double-buffered",
               stage);
  TESSEL_CHECK(stages >= 2 && stages <= kMaxStages, "double_buffer on '{}': {} stages (2 to {})", stage, stages, kMaxStages);
  s.doubleBuffer = true;
  s.bufferStages = stages;
}

std::string DoubleBufferStep::print() const {
  return stages == 2 ? fmt::format("{}.double_buffer()", stage) : fmt::format("{}.double_buffer(stages={})", stage, stages);
}
json DoubleBufferStep::toJson() const {
  json j = {{"step", "double_buffer"}, {"stage", stage}};
  if (stages != 2) j["stages"] = stages;  // two: what records written before stages existed mean
  return j;
}
StepPtr DoubleBufferStep::fromJson(const json& j) {
  return std::make_shared<DoubleBufferStep>(j.at("stage").get<std::string>(), j.contains("stages") ? j.at("stages").get<int>() : 2);
}

// ---- storage_align ---------------------------------------------------------------------------

StorageAlignStep::StorageAlignStep(std::string s, std::string a, int64_t f, int64_t o)
    : stage(std::move(s)), axis(std::move(a)), factor(f), offset(o) {}

void StorageAlignStep::apply(State& state) const {
  Stage& s = computeStage(state, stage);
  TESSEL_CHECK(factor > 0, "storage_align on {}.{}: factor must be positive, got {}", stage, axis, factor);
  TESSEL_CHECK(offset >= 0 && offset < factor, "storage_align on {}.{}: offset must be in [0, {}), got {}", stage, axis,
               factor, offset);
  int found = -1;
  for (int r = 0; r < int(s.op->axes.size()); ++r)
    if (s.iterator(r).name == axis) found = r;
  TESSEL_CHECK(found >= 0, "storage_align: stage '{}' has no data axis '{}'", stage, axis);
  TESSEL_CHECK(found + 1 < int(s.op->axes.size()), "storage_align on {}.{}: the innermost axis has stride 1 and cannot be aligned",
               stage, axis);
  TESSEL_CHECK(!state.isOutput(stage), "storage_align on '{}': an output's layout is fixed by the caller", stage);
  s.storageAlign[found] = {factor, offset};
}

std::string StorageAlignStep::print() const { return fmt::format("{}.storage_align({}, {}, {})", stage, axis, factor, offset); }
json StorageAlignStep::toJson() const {
  return {{"step", "storage_align"}, {"stage", stage}, {"axis", axis}, {"factor", factor}, {"offset", offset}};
}
StepPtr StorageAlignStep::fromJson(const json& j) {
  return std::make_shared<StorageAlignStep>(j.at("stage").get<std::string>(), j.at("axis").get<std::string>(),
                                            jsonInteger(j.at("factor"), "factor"), jsonInteger(j.at("offset"), "offset"));
}

}  // namespace tessel::schedule
