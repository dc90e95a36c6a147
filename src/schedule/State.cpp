#include "schedule/State.h"

#include <algorithm>

#include <fmt/format.h>

#include "ir/Printer.h"
#include "schedule/BoundInference.h"
#include "support/Error.h"

namespace tessel::schedule {

const char* annotationName(Annotation a) {
  switch (a) {
    case Annotation::None: return "for";
    case Annotation::Parallel: return "parallel";
    case Annotation::Vectorize: return "vectorize";
    case Annotation::Unroll: return "unroll";
    case Annotation::VThread: return "vthread";
    case Annotation::BlockX: return "blockIdx.x";
    case Annotation::BlockY: return "blockIdx.y";
    case Annotation::BlockZ: return "blockIdx.z";
    case Annotation::ThreadX: return "threadIdx.x";
    case Annotation::ThreadY: return "threadIdx.y";
    case Annotation::ThreadZ: return "threadIdx.z";
  }
  return "?";
}

Annotation parseAnnotation(const std::string& text) {
  for (int a = 0; a <= int(Annotation::ThreadZ); ++a)
    if (text == annotationName(Annotation(a))) return Annotation(a);
  if (text == "none") return Annotation::None;
  fail("unknown annotation '{}' (expected none, parallel, vectorize, unroll, vthread, blockIdx.x/y/z, threadIdx.x/y/z)", text);
}

int Stage::leafByName(const std::string& name) const {
  for (int id : leaves)
    if (iterator(id).name == name) return id;
  std::string names;
  for (int id : leaves) names += (names.empty() ? "" : ", ") + iterator(id).name;
  fail("stage '{}' has no loop iterator '{}' (its iterators: {})", this->name(), name, names);
}

int Stage::leafPosition(int id) const {
  for (size_t p = 0; p < leaves.size(); ++p)
    if (leaves[p] == id) return int(p);
  return -1;
}

Stage makeStage(const te::Operation& op) {
  Stage s;
  s.op = op;
  if (op->isPlaceholder()) return s;
  auto add = [&](const ir::IterVar& v, IteratorKind kind) {
    Iterator it;
    it.id = int(s.iterators.size());
    it.name = v.var.name();
    it.extent = v.extent;
    it.kind = kind;
    s.iterators.push_back(it);
    s.leaves.push_back(it.id);
  };
  for (auto& a : op->axes) add(a, IteratorKind::Spatial);
  if (auto r = op->reduction())
    for (auto& a : r->axes) add(a, IteratorKind::Reduce);
  s.rootCount = int(s.iterators.size());
  return s;
}

State::State(const te::ComputeDAG& dag) : dag_(dag) {
  for (auto& op : dag.ops()) stages_.push_back(makeStage(op));
}

int State::stageIndex(const std::string& name) const {
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].name() == name) return int(i);
  return -1;
}

Stage& State::stage(const std::string& name) {
  return const_cast<Stage&>(static_cast<const State*>(this)->stage(name));
}

const Stage& State::stage(const std::string& name) const {
  int i = stageIndex(name);
  if (i < 0) {
    std::string names;
    for (auto& s : stages_) names += (names.empty() ? "" : ", ") + s.name();
    fail("no stage named '{}' (stages: {})", name, names);
  }
  return stages_[size_t(i)];
}

std::vector<std::string> State::consumers(const std::string& name) const {
  std::vector<std::string> result;
  for (auto& s : stages_) {
    for (auto& a : te::ComputeDAG::accesses(*s.op)) {
      if (a.producer == name) {
        result.push_back(s.name());
        break;
      }
    }
  }
  return result;
}

std::vector<std::string> State::effectiveConsumers(const std::string& name) const {
  std::vector<std::string> result;
  for (auto& c : consumers(name)) {
    std::vector<std::string> readers = stage(c).attach == AttachKind::Inline ? effectiveConsumers(c) : std::vector<std::string>{c};
    for (auto& r : readers)
      if (std::find(result.begin(), result.end(), r) == result.end()) result.push_back(r);
  }
  return result;
}

bool State::isWithin(const std::string& stageName, const std::string& ancestor) const {
  for (std::string walk = stageName;;) {
    if (walk == ancestor) return true;
    const Stage& w = stage(walk);
    if (w.attach != AttachKind::At) return false;
    walk = w.attachStage;
  }
}

void State::insertStage(int index, Stage stage) { stages_.insert(stages_.begin() + index, std::move(stage)); }

void State::inferBounds() {
  if (boundsDeferred_) {
    boundsStale_ = true;
    return;
  }
  inferBoundsNow();
}

void State::setBoundsDeferred(bool deferred) {
  boundsDeferred_ = deferred;
  if (!deferred) ensureBounds();
}

void State::ensureBounds() {
  if (!boundsStale_) return;
  boundsStale_ = false;
  inferBoundsNow();
}

void State::checkVectorizable(const Stage& stage, const Iterator& it) {
  TESSEL_CHECK(it.exactExtent, "cannot vectorize {}.{}: its extent is not a constant (it varies with the enclosing loops)",
               stage.name(), it.name);
  TESSEL_CHECK(it.extent <= kMaxVectorLanes, "cannot vectorize {}.{}: extent {} exceeds {} lanes; split it first", stage.name(),
               it.name, it.extent, kMaxVectorLanes);
}

void State::inferBoundsNow() {
  // Without attached stages every stage covers its whole shape: its leaf extents follow from
  // the split and fuse relations alone, and the full analysis (inlining, region relaxation)
  // would find exactly that. Template tuning replays thousands of step lists; most of their
  // steps come before the first compute_at.
  bool attached = false;
  for (const auto& s : stages_) attached = attached || s.attach == AttachKind::At;
  if (attached) {
    schedule::inferBounds(*this, BoundsDetail::Extents);
  } else {
    for (auto& s : stages_) assignWholeShapeExtents(s);
  }
  // A step that makes a vectorized loop's extent vary (compute_at into a tile whose region
  // changes size) is the step at fault: say so there, not later when lowering refuses.
  for (auto& s : stages_)
    for (int leaf : s.leaves) {
      const Iterator& it = s.iterator(leaf);
      if (it.annotation == Annotation::Vectorize) checkVectorizable(s, it);
    }
  // Splitting a loop into more parts than its extent adds iterations that guards skip (a
  // factor is clamped to the extent, parts are not). Chained, that multiplies: a stage must
  // not be asked to iterate an absurd number of times (its index arithmetic would overflow
  // int64 long before it finished).
  constexpr double kMaxIterations = double(int64_t(1) << 48);
  for (const auto& s : stages_) {
    double iterations = 1;
    for (int leaf : s.leaves) iterations *= double(std::max<int64_t>(s.iterator(leaf).extent, 1));
    TESSEL_CHECK(iterations <= kMaxIterations, "stage {}: its loops would run {:.3g} iterations, more than 2^48", s.name(),
                 iterations);
  }
}

namespace {

void printStage(const State& state, const Stage& s, int indent, std::string& out);

void printAttached(const State& state, const Stage& target, int iteratorId, int indent, std::string& out) {
  for (auto& other : state.stages())
    if (other.attach == AttachKind::At && other.attachStage == target.name() && other.attachIterator == iteratorId)
      printStage(state, other, indent, out);
}

void printStage(const State& state, const Stage& s, int indent, std::string& out) {
  int level = indent;
  for (int id : s.leaves) {
    auto& it = s.iterator(id);
    out += fmt::format("{:{}}{} {} (0,{})", "", level * 2, annotationName(it.annotation), it.name, it.extent);
    for (auto& [k, v] : it.pragmas) out += fmt::format(" {}={}", k, v);
    out += "\n";
    ++level;
    printAttached(state, s, id, level, out);
  }
  const char* assign = " = ";
  if (auto r = s.op->reduction())
    assign = r->op == ir::ReduceOp::Sum ? " += " : (r->op == ir::ReduceOp::Max ? " max= " : " min= ");
  out += fmt::format("{:{}}{}{}...\n", "", level * 2, s.name(), assign);
}

}  // namespace

std::string State::toString() const {
  std::string out = "Placeholder: ";
  bool first = true;
  for (auto& s : stages_) {
    if (!s.isPlaceholder()) continue;
    out += (first ? "" : ", ") + s.name();
    first = false;
  }
  out += "\n";
  for (auto& s : stages_)
    if (!s.isPlaceholder() && s.attach == AttachKind::Root) printStage(*this, s, 0, out);
  return out;
}

}  // namespace tessel::schedule
