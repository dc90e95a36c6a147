#include "graph/VariantChoice.h"

#include <fmt/format.h>

#include <map>

#include "graph/TaskExtraction.h"

namespace tessel::graph {

std::string VariantChoiceCounts::describe() const {
  std::string text = fmt::format("measured both ways: {} faster as Winograd, {} faster direct", fasterWinograd, fasterDirect);
  if (onlyWinograd + onlyDirect > 0) text += fmt::format("; measured one way: {} as Winograd, {} direct", onlyWinograd, onlyDirect);
  return text + fmt::format("; by the rules: {}", byRules);
}

VariantChoice chooseVariantsByCost(const Graph& direct, const std::vector<Graph>& winograd, const Graph& rules,
                                   const MeasuredCost& costOf) {
  auto costIn = [&](const std::map<std::string, std::string>& keys, const std::string& name) -> std::optional<double> {
    auto key = keys.find(name);
    return key == keys.end() ? std::nullopt : costOf(key->second);
  };
  const auto directKeys = workloadKeysByNode(direct);
  // Per candidate layer, in the order the variants name them: its tile size in each variant (0
  // where that variant keeps it direct) and each variant's measured cost.
  std::vector<std::string> layers;
  std::map<std::string, std::vector<std::pair<int, std::optional<double>>>> formsOf;
  for (const Graph& v : winograd) {
    const auto keys = workloadKeysByNode(v);
    for (size_t id = 0; id < v.nodes().size(); ++id)
      if (int m = winogradTileSize(v, int(id))) {
        const std::string& name = v.node(int(id)).name;
        auto [forms, inserted] = formsOf.try_emplace(name);
        if (inserted) layers.push_back(name);
        forms->second.emplace_back(m, costIn(keys, name));
      }
  }
  VariantChoice result;
  std::map<std::string, int> tileOf;
  for (const std::string& name : layers) {
    const std::optional<double> directCost = costIn(directKeys, name);
    std::optional<double> best = directCost;
    int fastest = 0;
    bool winogradMeasured = false;
    for (const auto& [m, cost] : formsOf[name]) {
      if (!cost) continue;
      winogradMeasured = true;
      if (!best || *cost < *best) {
        best = cost;
        fastest = m;
      }
    }
    if (!best) {
      ++result.counts.byRules;
      tileOf[name] = winogradTileSize(rules, rules.findNode(name));
      continue;
    }
    tileOf[name] = fastest;
    if (directCost && winogradMeasured) ++(fastest != 0 ? result.counts.fasterWinograd : result.counts.fasterDirect);
    else ++(fastest != 0 ? result.counts.onlyWinograd : result.counts.onlyDirect);
  }
  result.choice = [tileOf = std::move(tileOf)](const Graph& g, int id) {
    auto it = tileOf.find(g.node(id).name);
    return it == tileOf.end() ? 0 : it->second;
  };
  return result;
}

}  // namespace tessel::graph
