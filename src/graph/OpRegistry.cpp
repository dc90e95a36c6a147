#include "graph/OpRegistry.h"

#include <fmt/ranges.h>

#include <map>
#include <mutex>

#include "support/Error.h"

namespace tessel::graph {

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::string, OpDef> ops;
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

const char* patternName(OpPattern p) {
  switch (p) {
    case OpPattern::ElemWise: return "elemwise";
    case OpPattern::Broadcast: return "broadcast";
    case OpPattern::Injective: return "injective";
    case OpPattern::CommReduce: return "reduce";
    case OpPattern::OutEWiseFusable: return "out_elemwise_fusable";
    case OpPattern::Opaque: return "opaque";
  }
  return "?";
}

void registerOp(OpDef def) {
  TESSEL_CHECK(!def.name.empty() && def.compute, "an operator definition needs a name and a compute function");
  TESSEL_CHECK(def.minInputs <= def.maxInputs, "operator '{}': minInputs > maxInputs", def.name);
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.ops[def.name] = std::move(def);
}

const OpDef& lookupOp(const std::string& name) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.ops.find(name);
  if (it == r.ops.end()) {
    std::vector<std::string> names;
    for (auto& [n, _] : r.ops) names.push_back(n);
    fail("unknown operator '{}' (known: {})", name, fmt::join(names, ", "));
  }
  return it->second;
}

bool isRegisteredOp(const std::string& name) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.ops.count(name) > 0;
}

std::vector<std::string> registeredOpNames() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (auto& [n, _] : r.ops) names.push_back(n);
  return names;
}

}  // namespace tessel::graph
