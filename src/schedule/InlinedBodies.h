/// The stages' bodies as lowering sees them: each read of an inlined stage replaced by that
/// stage's body (itself inlined), with the reads of every body. An operation's inlined body
/// depends only on the operation and on the operations of the inlined stages its reads reach,
/// which a search's states share by the thousand (every mutation of a sketch's tile sizes
/// replays and bounds a state inlining the same stages), so bodies are kept per operation
/// instead of being substituted again for every state.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Expr.h"
#include "te/ComputeDAG.h"

namespace tessel::schedule {

class State;
struct Stage;

struct InlinedBodies {
  /// Per compute stage (placeholders have none), by name.
  std::map<std::string, ir::Expr> bodies;
  /// Per stage neither inlined nor a placeholder, by name: the reads of its inlined body.
  std::map<std::string, std::vector<te::TensorAccess>> reads;
};

/// One compute stage's inlined body (and those of the inlined stages it reads, no other): what
/// the cost model's features and the sketch rules ask for, stage by stage, in the search.
ir::Expr inlinedBodyOf(const State& state, const Stage& stage);

/// The inlined bodies of the state's stages, from the kept ones where their operations and
/// inlined producers are the same. Safe to call from several threads.
InlinedBodies inlinedBodies(const State& state);

}  // namespace tessel::schedule
