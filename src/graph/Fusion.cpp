#include "graph/Fusion.h"

#include <algorithm>
#include <map>
#include <set>

#include "support/Error.h"

namespace tessel::graph {

namespace {

// More ops than this in one function only slows compilation; real epilogues are short.
constexpr size_t kMaxGroupSize = 64;

bool isElementwiseLike(OpPattern p) { return p == OpPattern::ElemWise || p == OpPattern::Broadcast; }

/// Whether a node of pattern `node` may join a group whose master pattern is `group`.
bool canJoin(OpPattern group, OpPattern node) {
  if (isElementwiseLike(node))
    return group == OpPattern::OutEWiseFusable || group == OpPattern::CommReduce || isElementwiseLike(group) ||
           group == OpPattern::Injective;
  if (node == OpPattern::Injective) return isElementwiseLike(group) || group == OpPattern::Injective;
  return false;
}

/// A pointwise convolution marked by fuse_separable_blocks joins the group of the depthwise
/// convolution that makes its data, when that convolution is the group's one heavy op.
bool joinsDepthwise(const Graph& graph, const Node& n, const FusedGroup& producer) {
  if (!n.attrs.value("fuse_depthwise", false)) return false;
  int heavy = 0;
  for (int id : producer.nodes) {
    const Node& p = graph.node(id);
    if (lookupOp(p.op).pattern != OpPattern::OutEWiseFusable) continue;
    ++heavy;
    if (p.op != "depthwise_conv2d") return false;
  }
  return heavy == 1;
}

/// Marked by the VTA flow (vta/ShortcutFusion.h): the node belongs with the reader of its chain.
bool fusesIntoReader(const Node& n) { return n.attrs.value("fuse_into_reader", false); }

bool allFuseIntoReader(const Graph& graph, const FusedGroup& group) {
  return std::all_of(group.nodes.begin(), group.nodes.end(), [&](int id) { return fusesIntoReader(graph.node(id)); });
}

/// Moves each group made only of fuse_into_reader nodes into the group of its output's only
/// reader (when that reader is an operator outside it and the output is no graph output);
/// the merged group keeps its nodes in topological (id) order. Emptied groups are dropped.
void mergeIntoReaders(const Graph& graph, std::vector<FusedGroup>& groups, std::vector<int>& groupOf,
                      const std::vector<std::vector<int>>& consumers, const std::vector<bool>& isOutput) {
  std::vector<bool> moved(groups.size(), false);
  for (size_t g = 0; g < groups.size(); ++g) {
    FusedGroup& chain = groups[g];
    if (!allFuseIntoReader(graph, chain)) continue;
    const std::vector<int>& readers = consumers[size_t(chain.output)];
    if (readers.size() != 1 || isOutput[size_t(chain.output)]) continue;
    int target = groupOf[size_t(readers[0])];
    if (target < 0 || size_t(target) == g) continue;
    FusedGroup& reader = groups[size_t(target)];
    for (int id : chain.nodes) groupOf[size_t(id)] = target;
    reader.nodes.insert(reader.nodes.end(), chain.nodes.begin(), chain.nodes.end());
    std::sort(reader.nodes.begin(), reader.nodes.end());
    chain.nodes.clear();
    moved[g] = true;
  }
  std::vector<int> renumber(groups.size(), -1);
  std::vector<FusedGroup> kept;
  for (size_t g = 0; g < groups.size(); ++g)
    if (!moved[g]) {
      renumber[g] = int(kept.size());
      kept.push_back(std::move(groups[g]));
    }
  for (int& g : groupOf)
    if (g >= 0) g = renumber[size_t(g)];
  groups = std::move(kept);
}

/// The element-wise diamond after node `v` (a group's output read by several nodes): the nodes
/// every path from `v` runs through up to the first node `p` all of them reach (v's immediate
/// post-dominator), when each of those nodes, `p` included, is element-wise or broadcast and
/// no graph output, and each reads `v`'s side only from inside the diamond. Returns them in
/// topological order, `p` last; empty when there is no such diamond within `limit` nodes.
/// GELU as exporters write it, x * 0.5 * (1 + erf(x / sqrt(2))), reads its x twice: its five
/// nodes then join the matmul that makes x instead of running as a function of their own.
std::vector<int> elementwiseDiamond(const Graph& graph, int v, const std::vector<std::vector<int>>& consumers,
                                    const std::vector<bool>& isOutput, size_t limit) {
  std::set<int> pending(consumers[size_t(v)].begin(), consumers[size_t(v)].end());
  std::vector<int> region;
  for (int id = v + 1; id < int(graph.nodes().size()) && !pending.empty(); ++id) {
    if (!pending.count(id)) continue;
    const Node& n = graph.node(id);
    if (n.kind != NodeKind::Op || !isElementwiseLike(lookupOp(n.op).pattern) || isOutput[size_t(id)] ||
        region.size() >= limit)
      return {};
    region.push_back(id);
    pending.erase(id);
    if (pending.empty()) return region;  // every path from v meets here
    pending.insert(consumers[size_t(id)].begin(), consumers[size_t(id)].end());
  }
  return {};
}

/// The master pattern of a group after a node joins: the heavier of the two.
OpPattern combine(OpPattern group, OpPattern node) { return std::max(group, node); }

/// The groups ordered so that each comes after the groups it reads. Groups are created in the
/// order of their first node, but a node joining an earlier group may read a group created
/// after it (add(max_pool(x), avg_pool(x)) joins the max pool's group and reads the average
/// pool's): such a group moves after its producers. Otherwise the creation order stays, so
/// task numbering does not change where it was already valid.
std::vector<FusedGroup> inTopologicalOrder(std::vector<FusedGroup> groups, const std::vector<int>& groupOf) {
  size_t n = groups.size();
  std::vector<std::vector<size_t>> readers(n);
  std::vector<int> pending(n, 0);
  for (size_t g = 0; g < n; ++g)
    for (int in : groups[g].inputs)
      if (int producer = groupOf[size_t(in)]; producer >= 0) {
        readers[size_t(producer)].push_back(g);
        ++pending[g];
      }
  // Kahn's algorithm, always taking the earliest created group that is ready.
  std::set<size_t> ready;
  for (size_t g = 0; g < n; ++g)
    if (pending[g] == 0) ready.insert(g);
  std::vector<FusedGroup> ordered;
  while (!ready.empty()) {
    size_t g = *ready.begin();
    ready.erase(ready.begin());
    ordered.push_back(std::move(groups[g]));
    for (size_t r : readers[g])
      if (--pending[r] == 0) ready.insert(r);
  }
  TESSEL_ICHECK(ordered.size() == n);  // fusion never makes a cycle of groups
  return ordered;
}

}  // namespace

std::vector<FusedGroup> fuseOperators(const Graph& graph, bool fuse) {
  const auto& nodes = graph.nodes();
  auto consumers = graph.consumers();
  std::vector<int> groupOf(nodes.size(), -1);
  std::vector<FusedGroup> groups;
  std::vector<bool> isOutput = graph.outputFlags();

  for (size_t id = 0; id < nodes.size(); ++id) {
    const Node& n = nodes[id];
    if (n.kind != NodeKind::Op || groupOf[id] >= 0) continue;  // (a diamond's nodes are placed already)
    OpPattern pattern = lookupOp(n.op).pattern;
    int target = -1;
    if (fuse) {
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        int in = n.inputs[i];
        int g = groupOf[size_t(in)];
        if (g < 0 || groups[size_t(g)].output != in) continue;
        // The producer's value must not be needed by anyone else (nor be a graph output).
        if (consumers[size_t(in)].size() != 1 || isOutput[size_t(in)]) continue;
        if (groups[size_t(g)].nodes.size() >= kMaxGroupSize) continue;
        // A chain that fuses into its reader starts apart from its producer.
        if (fusesIntoReader(n) && !allFuseIntoReader(graph, groups[size_t(g)])) continue;
        bool separable = i == 0 && joinsDepthwise(graph, n, groups[size_t(g)]);
        if (!canJoin(groups[size_t(g)].pattern, pattern) && !separable) continue;
        target = g;
        break;
      }
    }
    if (target < 0) {
      target = int(groups.size());
      groups.push_back({});
      groups.back().pattern = pattern;
    } else {
      groups[size_t(target)].pattern = combine(groups[size_t(target)].pattern, pattern);
    }
    FusedGroup& g = groups[size_t(target)];
    g.nodes.push_back(int(id));
    g.output = int(id);
    groupOf[id] = target;
    // A value read by several element-wise nodes that meet again: the whole diamond joins.
    if (fuse && consumers[id].size() > 1 && !isOutput[id] && canJoin(g.pattern, OpPattern::ElemWise) &&
        !fusesIntoReader(n) && g.nodes.size() < kMaxGroupSize) {
      for (int d : elementwiseDiamond(graph, int(id), consumers, isOutput, kMaxGroupSize - g.nodes.size())) {
        g.nodes.push_back(d);
        g.output = d;
        g.pattern = combine(g.pattern, lookupOp(nodes[size_t(d)].op).pattern);
        groupOf[size_t(d)] = target;
      }
    }
  }
  if (fuse) mergeIntoReaders(graph, groups, groupOf, consumers, isOutput);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    FusedGroup& g = groups[gi];
    for (int id : g.nodes) {
      for (int in : nodes[size_t(id)].inputs) {
        if (groupOf[size_t(in)] == int(gi)) continue;
        if (std::find(g.inputs.begin(), g.inputs.end(), in) == g.inputs.end()) g.inputs.push_back(in);
      }
    }
  }
  return inTopologicalOrder(std::move(groups), groupOf);
}

te::ComputeDAG buildGroupDAG(const Graph& graph, const FusedGroup& group) {
  std::map<int, te::Tensor> values;
  std::vector<te::Tensor> placeholders;
  for (int in : group.inputs) {
    const Node& n = graph.node(in);
    placeholders.push_back(te::placeholder(n.type.shape, n.type.dtype, "placeholder"));
    values[in] = placeholders.back();
  }
  for (int id : group.nodes) {
    const Node& n = graph.node(id);
    std::vector<te::Tensor> args;
    for (int in : n.inputs) args.push_back(values.at(in));
    try {
      values[id] = lookupOp(n.op).compute(args, n.attrs);
    } catch (const Error& e) {
      throw e.withContext("building node '" + n.name + "' (" + n.op + ")");
    }
  }
  return te::ComputeDAG({values.at(group.output)}, placeholders);
}

}  // namespace tessel::graph
