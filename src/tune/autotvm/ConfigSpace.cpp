#include "tune/autotvm/ConfigSpace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "support/Error.h"

namespace tessel::tune::autotvm {

const char* knobKindName(KnobKind kind) {
  switch (kind) {
    case KnobKind::Split: return "split";
    case KnobKind::Reorder: return "reorder";
    case KnobKind::Annotate: return "annotate";
    case KnobKind::Other: return "other";
  }
  return "?";
}

namespace {

/// Inner parts (all but the outermost), each from `choices`, whose product stays within the
/// extent; the outermost is ceil(extent / product).
void enumerate(int64_t extent, int remaining, const std::vector<int64_t>& choices, bool exact, std::vector<int64_t>& inner,
               std::vector<std::vector<int64_t>>& out) {
  if (remaining == 0) {
    int64_t product = 1;
    for (int64_t f : inner) product *= f;
    if (exact && extent % product != 0) return;
    std::vector<int64_t> parts{(extent + product - 1) / product};
    parts.insert(parts.end(), inner.begin(), inner.end());
    out.push_back(parts);
    return;
  }
  int64_t product = 1;
  for (int64_t f : inner) product *= f;
  for (int64_t c : choices) {
    if (product * c > extent) continue;
    inner.push_back(c);
    enumerate(extent, remaining - 1, choices, exact, inner, out);
    inner.pop_back();
  }
}

}  // namespace

std::vector<std::vector<int64_t>> splitCandidates(int64_t extent, const SplitOptions& options) {
  TESSEL_CHECK(extent >= 1, "define_split: extent must be positive, got {}", extent);
  TESSEL_CHECK(options.numOutputs >= 2, "define_split: num_outputs must be at least 2, got {}", options.numOutputs);
  int64_t bound = options.maxFactor > 0 ? std::min(options.maxFactor, extent) : extent;
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> inner;
  if (options.policy != SplitPolicy::Power2) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= bound; ++d)
      if (extent % d == 0) divisors.push_back(d);
    enumerate(extent, options.numOutputs - 1, divisors, true, inner, out);
  }
  if (options.policy != SplitPolicy::Factors) {
    std::vector<int64_t> powers;
    for (int64_t p = 1; p <= bound; p *= 2) powers.push_back(p);
    enumerate(extent, options.numOutputs - 1, powers, false, inner, out);
  }
  std::set<std::vector<int64_t>> seen;
  std::vector<std::vector<int64_t>> unique;
  for (auto& parts : out)
    if ((!options.filter || options.filter(parts)) && seen.insert(parts).second) unique.push_back(parts);
  for (auto& parts : options.include) {
    TESSEL_CHECK(int(parts.size()) == options.numOutputs, "define_split: an included factor list has {} parts, not {}",
                 parts.size(), options.numOutputs);
    if (seen.insert(parts).second) unique.push_back(parts);
  }
  std::sort(unique.begin(), unique.end(), [](const auto& a, const auto& b) {
    return std::lexicographical_compare(a.rbegin(), a.rend(), b.rbegin(), b.rend());
  });
  return unique;
}

void ConfigSpace::add(Knob knob) {
  TESSEL_CHECK(knobIndex(knob.name) < 0, "config space: knob '{}' is defined twice", knob.name);
  TESSEL_CHECK(!knob.options.empty(), "config space: knob '{}' has no options", knob.name);
  knobs_.push_back(std::move(knob));
}

void ConfigSpace::defineSplit(const std::string& name, int64_t extent, const SplitOptions& options) {
  Knob k{name, KnobKind::Split, {}};
  for (auto& parts : splitCandidates(extent, options)) k.options.push_back(parts);
  TESSEL_CHECK(!k.options.empty(), "define_split '{}': no factor list of {} passes the filter", name, extent);
  add(std::move(k));
}

void ConfigSpace::defineReorder(const std::string& name, int numAxes, const std::string& policy,
                                const std::vector<std::vector<int>>& candidates) {
  Knob k{name, KnobKind::Reorder, {}};
  std::vector<int> order(static_cast<size_t>(numAxes), 0);
  std::iota(order.begin(), order.end(), 0);
  if (policy == "identity") {
    k.options.push_back(order);
  } else if (policy == "all") {
    TESSEL_CHECK(numAxes <= 8, "define_reorder '{}': {} axes have too many orders", name, numAxes);
    do k.options.push_back(order);
    while (std::next_permutation(order.begin(), order.end()));
  } else if (policy == "candidate") {
    for (const auto& c : candidates) {
      std::vector<int> sorted = c;
      std::sort(sorted.begin(), sorted.end());
      TESSEL_CHECK(sorted == order, "define_reorder '{}': candidate [{}] is not a permutation of {} axes", name,
                   fmt::join(c, ", "), numAxes);
      k.options.push_back(c);
    }
  } else {
    fail("define_reorder '{}': unknown policy '{}' (all, identity, candidate)", name, policy);
  }
  add(std::move(k));
}

void ConfigSpace::defineAnnotate(const std::string& name, int numAxes, const std::string& policy) {
  Knob k{name, KnobKind::Annotate, {}};
  std::vector<std::string> choices;
  if (policy == "try_unroll") choices = {"none", "unroll"};
  else if (policy == "try_vec") choices = {"none", "vec"};
  else if (policy == "try_unroll_vec") choices = {"none", "unroll", "vec"};
  else fail("define_annotate '{}': unknown policy '{}' (try_unroll, try_vec, try_unroll_vec)", name, policy);
  // Every combination over the axes, the first axis varying slowest.
  std::vector<size_t> pick(size_t(numAxes), 0);
  while (true) {
    std::vector<std::string> option;
    for (size_t p : pick) option.push_back(choices[p]);
    k.options.push_back(option);
    size_t d = pick.size();
    while (d > 0 && ++pick[d - 1] == choices.size()) pick[--d] = 0;
    if (d == 0) break;
  }
  add(std::move(k));
}

void ConfigSpace::defineKnob(const std::string& name, std::vector<nlohmann::json> values) {
  add({name, KnobKind::Other, std::move(values)});
}

int ConfigSpace::knobIndex(const std::string& name) const {
  for (size_t i = 0; i < knobs_.size(); ++i)
    if (knobs_[i].name == name) return int(i);
  return -1;
}

const Knob& ConfigSpace::knob(const std::string& name) const {
  int i = knobIndex(name);
  if (i < 0) {
    std::vector<std::string> names;
    for (auto& k : knobs_) names.push_back(k.name);
    fail("config space has no knob '{}' (knobs: {})", name, fmt::join(names, ", "));
  }
  return knobs_[size_t(i)];
}

uint64_t ConfigSpace::size() const {
  uint64_t n = 1;
  for (auto& k : knobs_) n *= uint64_t(k.options.size());
  return n;
}

ConfigEntity ConfigSpace::get(uint64_t index) const {
  TESSEL_CHECK(index < size(), "config index {} is outside the space of {} configs", index, size());
  std::vector<size_t> choices;
  uint64_t rest = index;
  for (auto& k : knobs_) {
    choices.push_back(size_t(rest % k.options.size()));
    rest /= k.options.size();
  }
  return ConfigEntity(this, index, std::move(choices));
}

ConfigEntity ConfigSpace::fromChoices(const std::vector<size_t>& choices) const {
  TESSEL_CHECK(choices.size() == knobs_.size(), "a config needs {} knob choices, got {}", knobs_.size(), choices.size());
  uint64_t index = 0, stride = 1;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    TESSEL_CHECK(choices[i] < knobs_[i].options.size(), "knob '{}' has {} options, choice {} is out of range", knobs_[i].name,
                 knobs_[i].options.size(), choices[i]);
    index += choices[i] * stride;
    stride *= knobs_[i].options.size();
  }
  return ConfigEntity(this, index, choices);
}

std::optional<size_t> ConfigSpace::optionIndex(const std::string& name, const nlohmann::json& value) const {
  const Knob& k = knob(name);
  for (size_t i = 0; i < k.options.size(); ++i)
    if (k.options[i] == value) return i;
  return std::nullopt;
}

EntityMatch ConfigSpace::matchEntity(const nlohmann::json& entity) const {
  EntityMatch match;
  if (!entity.is_array()) {
    match.mismatch = "the entity is not a list of [knob, kind, value]";
    return match;
  }
  std::vector<std::optional<size_t>> chosen(knobs_.size());
  for (const auto& e : entity) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_string()) {
      match.mismatch = "the entity is not a list of [knob, kind, value]";
      return match;
    }
    std::string name = e[0].get<std::string>();
    int i = knobIndex(name);
    if (i < 0) {
      match.mismatch = fmt::format("knob '{}' is not in the space", name);
      return match;
    }
    if (chosen[size_t(i)]) {
      match.mismatch = fmt::format("knob '{}' is named twice", name);
      return match;
    }
    chosen[size_t(i)] = optionIndex(name, e[2]);
    if (!chosen[size_t(i)]) {
      match.mismatch = fmt::format("a value of '{}' is not among its options", name);
      return match;
    }
  }
  std::vector<size_t> choices;
  for (size_t i = 0; i < knobs_.size(); ++i) {
    if (!chosen[i]) match.missing.push_back(knobs_[i].name);
    choices.push_back(chosen[i].value_or(0));
  }
  match.config = fromChoices(choices);
  return match;
}

std::optional<ConfigEntity> ConfigSpace::fromEntityJson(const nlohmann::json& entity) const {
  EntityMatch match = matchEntity(entity);
  if (!match.missing.empty()) return std::nullopt;
  return match.config;
}

std::string ConfigSpace::str() const {
  std::string out = fmt::format("ConfigSpace ({} configs)\n", size());
  for (size_t i = 0; i < knobs_.size(); ++i)
    out += fmt::format("  {:2}  {:<12} {:<9} {} options, e.g. {}\n", i, knobs_[i].name, knobKindName(knobs_[i].kind),
                       knobs_[i].options.size(), knobs_[i].options[0].dump());
  return out;
}

const nlohmann::json& ConfigEntity::value(const std::string& knob) const {
  int i = space_->knobIndex(knob);
  if (i < 0) space_->knob(knob);  // throws, naming the knobs
  return space_->knobs()[size_t(i)].options[choices_[size_t(i)]];
}

bool ConfigEntity::has(const std::string& knob) const { return space_->knobIndex(knob) >= 0; }

std::vector<int64_t> ConfigEntity::split(const std::string& knob) const { return value(knob).get<std::vector<int64_t>>(); }
std::vector<int> ConfigEntity::order(const std::string& knob) const { return value(knob).get<std::vector<int>>(); }
std::vector<std::string> ConfigEntity::annotations(const std::string& knob) const {
  return value(knob).get<std::vector<std::string>>();
}

nlohmann::json ConfigEntity::toJson() const {
  nlohmann::json entity = nlohmann::json::array();
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Knob& k = space_->knobs()[i];
    entity.push_back({k.name, knobKindName(k.kind), k.options[choices_[i]]});
  }
  return {{"index", index_}, {"entity", entity}};
}

std::string ConfigEntity::str() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < choices_.size(); ++i)
    parts.push_back(fmt::format("('{}', {})", space_->knobs()[i].name, space_->knobs()[i].options[choices_[i]].dump()));
  return fmt::format("[{}],{}", fmt::join(parts, ", "), index_);
}

}  // namespace tessel::tune::autotvm
