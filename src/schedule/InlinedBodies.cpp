#include "schedule/InlinedBodies.h"

#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/Mutator.h"
#include "schedule/State.h"

namespace tessel::schedule {

using namespace ir;

namespace {

/// What an operation's inlined body depends on: the operation, then the operations of the
/// inlined stages its reads reach (through other inlined stages), in the order first reached.
/// Held, so that no other operation takes their addresses while an entry lives.
using Key = std::vector<te::Operation>;

struct KeyHash {
  size_t operator()(const Key& key) const {
    size_t h = key.size();
    for (const te::Operation& op : key) h = h * 1000003u ^ std::hash<const void*>()(op.get());
    return h;
  }
};

struct Kept {
  Expr body;
  std::optional<std::vector<te::TensorAccess>> reads;  // computed when a stage first needs them
};

/// The bodies of operations that inline others, by key. Searches create operations anew with
/// every replay of a cache_read, cache_write or rfactor, so entries of operations no state uses
/// any more pile up: past a bound the memo starts over (a search round refills it in a few
/// states).
class Memo {
 public:
  std::optional<Kept> find(const Key& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  void keep(const Key& key, Kept kept) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= kMaxEntries) entries_.clear();
    entries_[key] = std::move(kept);
  }

 private:
  static constexpr size_t kMaxEntries = 1024;
  std::mutex mutex_;
  std::unordered_map<Key, Kept, KeyHash> entries_;
};

Memo& memo() {
  static Memo instance;
  return instance;
}

/// The names of the tensors an expression reads, each once, in order of first read.
void collectProducers(const Expr& e, std::vector<std::string>& out) {
  struct Collector : IRVisitor {
    std::vector<std::string>& names;
    explicit Collector(std::vector<std::string>& n) : names(n) {}
    void visit(const Expr& x) override {
      if (auto load = x.as<ProducerLoadNode>())
        if (std::find(names.begin(), names.end(), load->producer) == names.end()) names.push_back(load->producer);
      IRVisitor::visit(x);
    }
  } collector(out);
  collector.visit(e);
}

/// Replaces reads of inlined stages by their bodies (themselves inlined, each once).
class Inliner : public IRMutator {
 public:
  explicit Inliner(const State& s) : state(s) {}

  Expr visitProducerLoad(const Expr& e, const ProducerLoadNode* n) override {
    std::vector<Expr> idx;
    for (auto& i : n->indices) idx.push_back(mutate(i));
    if (const Stage* producer = inlinedStage(n->producer)) {
      const te::OperationNode& op = *producer->op;
      VarMap m;
      for (size_t d = 0; d < op.axes.size(); ++d) m[op.axes[d].var.node()] = idx[d];
      return substitute(body(producer->op).body, m);
    }
    return producerLoad(n->producer, e.type(), idx);
  }

  /// The operation's body with its inlined producers substituted (this state's, kept by stage
  /// name with its key).
  const Kept& body(const te::Operation& op) {
    auto it = bodies_.find(op->name);
    if (it != bodies_.end()) return it->second.second;
    Key key = keyOf(op);
    // An operation that reads no inlined stage is its own inlined body: nothing to keep (the
    // operations a replay creates anew are mostly such, and would only fill the memo).
    std::optional<Kept> kept = key.size() == 1 ? Kept{op->body, std::nullopt} : memo().find(key);
    if (!kept) {
      kept = Kept{mutate(op->body), std::nullopt};
      memo().keep(key, *kept);
    }
    return bodies_.emplace(op->name, std::make_pair(std::move(key), std::move(*kept))).first->second.second;
  }

  /// The reads of a stage's inlined body (kept with the body).
  const std::vector<te::TensorAccess>& reads(const te::Operation& op) {
    body(op);
    auto& [key, kept] = bodies_.at(op->name);
    if (!kept.reads) {
      te::OperationNode withInlined = *op;
      withInlined.body = kept.body;
      kept.reads = te::ComputeDAG::accesses(withInlined);
      if (key.size() > 1) memo().keep(key, kept);
    }
    return *kept.reads;
  }

 private:
  const Stage* inlinedStage(const std::string& name) const {
    int si = state.stageIndex(name);
    if (si < 0 || state.stages()[size_t(si)].attach != AttachKind::Inline) return nullptr;
    return &state.stages()[size_t(si)];
  }

  Key keyOf(const te::Operation& op) const {
    Key key{op};
    std::set<std::string> seen;
    std::vector<const te::OperationNode*> pending{op.get()};
    while (!pending.empty()) {
      const te::OperationNode* next = pending.back();
      pending.pop_back();
      std::vector<std::string> producers;
      collectProducers(next->body, producers);
      for (auto it = producers.rbegin(); it != producers.rend(); ++it) {
        const Stage* producer = inlinedStage(*it);
        if (!producer || !seen.insert(*it).second) continue;
        key.push_back(producer->op);
        pending.push_back(producer->op.get());
      }
    }
    return key;
  }

  const State& state;
  std::map<std::string, std::pair<Key, Kept>> bodies_;  // this state's, by stage name
};

}  // namespace

ir::Expr inlinedBodyOf(const State& state, const Stage& stage) { return Inliner(state).body(stage.op).body; }

InlinedBodies inlinedBodies(const State& state) {
  InlinedBodies result;
  Inliner inliner(state);
  for (const Stage& s : state.stages()) {
    if (s.isPlaceholder()) continue;
    result.bodies[s.name()] = inliner.body(s.op).body;
    if (s.attach != AttachKind::Inline) result.reads[s.name()] = inliner.reads(s.op);
  }
  return result;
}

}  // namespace tessel::schedule
