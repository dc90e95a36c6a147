#include "graph/GraphParams.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "runtime/Params.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

/// At most `limit` names, then how many more: errors stay readable for a whole network.
std::string someNames(const std::vector<std::string>& names, size_t limit = 5, bool quote = true) {
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < limit; ++i) shown.push_back(quote ? "'" + names[i] + "'" : names[i]);
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > limit) text += fmt::format(" and {} more", names.size() - limit);
  return text;
}

/// The same dimensions in another order: what a weight of the other layout looks like.
bool isPermutation(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() != b.size() || a == b) return false;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

std::map<std::string, runtime::Tensor> learnedParams(const Graph& graph) {
  std::map<std::string, runtime::Tensor> learned;
  for (const auto& [name, value] : graph.params())
    if (graph.isLearned(name)) learned.emplace(name, value);
  return learned;
}

void saveGraphParams(const Graph& graph, const std::string& path) { runtime::saveParams(learnedParams(graph), path); }

void loadGraphParams(Graph& graph, const std::string& path) {
  runtime::NamedTensors file;
  try {
    file = runtime::loadParams(path);
  } catch (const Error& e) {
    throw e.withContext(fmt::format("loading the graph's parameters from {}", path));
  }
  std::vector<std::string> missing, unknown, mismatched;
  bool otherLayout = false;
  std::vector<std::pair<int, runtime::Tensor>> replacements;
  const std::map<std::string, runtime::Tensor> learned = learnedParams(graph);
  for (const auto& [name, value] : learned) {
    auto it = file.find(name);
    if (it == file.end()) {
      missing.push_back(name);
      continue;
    }
    int id = graph.findNode(name);
    const TensorType& want = graph.node(id).type;
    TensorType got{it->second.shape(), it->second.dtype()};
    if (got != want) {
      mismatched.push_back(fmt::format("'{}': expected {}, got {}", name, want.str(), got.str()));
      otherLayout = otherLayout || isPermutation(want.shape, got.shape);
      continue;
    }
    replacements.emplace_back(id, it->second);
  }
  for (const auto& [name, value] : file)
    if (!learned.count(name)) unknown.push_back(name);

  std::vector<std::string> problems;
  if (!missing.empty())
    problems.push_back(fmt::format("{} parameter{} missing from the file: {}", missing.size(), missing.size() == 1 ? "" : "s",
                                   someNames(missing)));
  if (!unknown.empty())
    problems.push_back(fmt::format("{} parameter{} in the file that the graph does not have: {}", unknown.size(),
                                   unknown.size() == 1 ? "" : "s", someNames(unknown)));
  if (!mismatched.empty()) {
    std::string text = fmt::format("{} parameter{} of the wrong shape or dtype: {}", mismatched.size(),
                                   mismatched.size() == 1 ? "" : "s", someNames(mismatched, 3, false));
    if (otherLayout)
      text += " — the shapes are permutations of the expected ones: a params file is layout-specific (NCHW graphs hold "
              "convolution weights as OIHW, NHWC graphs as HWIO); was the file written for the other layout?";
    problems.push_back(text);
  }
  TESSEL_CHECK(problems.empty(), "loading the graph's parameters from {}: {}", path, fmt::join(problems, "; "));
  for (auto& [id, value] : replacements) graph.setConstant(id, std::move(value));
}

}  // namespace tessel::graph
