#include "graph/TaskExtraction.h"

#include <fmt/format.h>

#include <map>

#include "support/Error.h"

namespace tessel::graph {

std::vector<Task> extractTasks(const Graph& graph, bool includeTrivial) {
  auto groups = fuseOperators(graph);
  std::vector<Task> tasks;
  std::map<std::string, size_t> byKey;
  for (size_t g = 0; g < groups.size(); ++g) {
    te::ComputeDAG dag = buildGroupDAG(graph, groups[g]);
    if (!includeTrivial && dag.flopCount() == 0) continue;
    std::string key = dag.workloadKey();
    auto it = byKey.find(key);
    if (it == byKey.end()) {
      Task t;
      t.workloadKey = key;
      t.dag = dag;
      t.flops = dag.flopCount();
      t.name = graph.node(groups[g].output).name;
      byKey[key] = tasks.size();
      tasks.push_back(std::move(t));
      it = byKey.find(key);
    }
    Task& t = tasks[it->second];
    t.weight += 1;
    t.groups.push_back(int(g));
  }
  return tasks;
}

std::map<std::string, std::string> workloadKeysByNode(const Graph& graph) {
  std::map<std::string, std::string> keys;
  for (const FusedGroup& group : fuseOperators(graph)) {
    std::string key = buildGroupDAG(graph, group).workloadKey();
    for (int node : group.nodes) keys[graph.node(node).name] = key;
  }
  return keys;
}

std::string formatTasks(const std::vector<Task>& tasks, const std::vector<size_t>& numbers) {
  TESSEL_CHECK(numbers.empty() || numbers.size() == tasks.size(), "formatTasks: {} numbers for {} tasks", numbers.size(), tasks.size());
  std::string out;
  for (size_t i = 0; i < tasks.size(); ++i) {
    out += fmt::format("========== Task {}  (workload key: {}) ==========\n", numbers.empty() ? i + 1 : numbers[i], tasks[i].workloadKey);
    out += tasks[i].dag.toString();
  }
  return out;
}

}  // namespace tessel::graph
