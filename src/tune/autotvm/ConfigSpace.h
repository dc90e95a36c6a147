/// The config space of a tuning template (AutoTVM's knobs). A template declares knobs — each a
/// named list of options — and a config is one choice per knob. Configs are numbered in mixed
/// radix over the knobs (the first knob varies fastest), so a tuner can walk, sample and
/// record the space as plain integers, and a record's index plus its entity (the chosen values,
/// by knob name) say exactly which schedule it measured.
///
///   define_split    the factors of an axis: [outer, ..., inner] whose product covers the extent
///                   ("factors": exact divisors; "power2": powers of two, the outer part rounding
///                   up; "verbose": both), optionally bounded by max_factor and a filter;
///   define_reorder  orders of some loops ("all" permutations, "identity", or candidates);
///   define_annotate annotations of some loops ("try_unroll", "try_vec", "try_unroll_vec");
///   define_knob     any list of values.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tessel::tune::autotvm {

enum class KnobKind { Split, Reorder, Annotate, Other };
const char* knobKindName(KnobKind kind);

struct Knob {
  std::string name;
  KnobKind kind = KnobKind::Other;
  std::vector<nlohmann::json> options;  ///< split: [factors]; reorder: [positions]; annotate: [names]; other: a value
};

enum class SplitPolicy { Factors, Power2, Verbose };

struct SplitOptions {
  SplitPolicy policy = SplitPolicy::Factors;
  int numOutputs = 2;     ///< parts, outermost first; the outermost covers what is left
  int64_t maxFactor = 0;  ///< largest inner part (0: no bound)
  /// Keeps only the factor lists it accepts (all parts, outermost first).
  std::function<bool(const std::vector<int64_t>&)> filter;
  /// Factor lists added whatever the policy and filter say (a template's default choice).
  std::vector<std::vector<int64_t>> include;
};

class ConfigSpace;

/// One point of a space: a choice per knob.
class ConfigEntity {
 public:
  ConfigEntity(const ConfigSpace* space, uint64_t index, std::vector<size_t> choices)
      : space_(space), index_(index), choices_(std::move(choices)) {}
  uint64_t index() const { return index_; }
  const std::vector<size_t>& choices() const { return choices_; }
  /// The chosen option of a knob; Error naming the knob if the space has none of that name.
  const nlohmann::json& value(const std::string& knob) const;
  /// Whether the space has a knob of that name (a knob a template defines on some devices only).
  bool has(const std::string& knob) const;
  std::vector<int64_t> split(const std::string& knob) const;
  std::vector<int> order(const std::string& knob) const;
  std::vector<std::string> annotations(const std::string& knob) const;
  /// {"index": 12, "entity": [["tile_oc", "split", [4, 1, 16]], ...]}
  nlohmann::json toJson() const;
  /// "[('tile_oc', [4, 1, 16]), ('tile_ow', [7, 8]), ...],None,12" in the seeds' spirit, shorter.
  std::string str() const;

 private:
  const ConfigSpace* space_;
  uint64_t index_;
  std::vector<size_t> choices_;
};

/// An entity matched against a space by knob name (ConfigSpace::matchEntity).
struct EntityMatch {
  /// The config, with the knobs the entity does not name at their first option; empty when the
  /// entity does not fit the space (then `mismatch` says why).
  std::optional<ConfigEntity> config;
  /// The space's knobs the entity does not name (an entity written before they existed).
  std::vector<std::string> missing;
  /// Why the entity does not fit, naming the knob but no value, so that many entities count
  /// under one reason: "knob 'x' is not in the space", "a value of 'tile_v' is not among its options".
  std::string mismatch;
};

class ConfigSpace {
 public:
  void defineSplit(const std::string& name, int64_t extent, const SplitOptions& options = {});
  void defineReorder(const std::string& name, int numAxes, const std::string& policy = "all",
                     const std::vector<std::vector<int>>& candidates = {});
  void defineAnnotate(const std::string& name, int numAxes, const std::string& policy);
  void defineKnob(const std::string& name, std::vector<nlohmann::json> values);

  const std::vector<Knob>& knobs() const { return knobs_; }
  const Knob& knob(const std::string& name) const;
  int knobIndex(const std::string& name) const;  ///< -1 if absent
  /// The number of configs (the product of the knobs' sizes); 1 for a space without knobs.
  uint64_t size() const;
  /// Error naming the index and the size when out of range.
  ConfigEntity get(uint64_t index) const;
  ConfigEntity fromChoices(const std::vector<size_t>& choices) const;
  /// The config whose entity JSON is `entity` (as toJson()["entity"] writes it), if in the space:
  /// every knob of the space named once, with one of its options, and no other knob.
  std::optional<ConfigEntity> fromEntityJson(const nlohmann::json& entity) const;
  /// Where an entity written by this space or by another version of its template lands here,
  /// by knob name (never by index: an index means nothing outside the space it was counted in).
  EntityMatch matchEntity(const nlohmann::json& entity) const;
  /// The index of the option of `knob` equal to `value`, if there is one.
  std::optional<size_t> optionIndex(const std::string& knob, const nlohmann::json& value) const;

  std::string str() const;  ///< one line per knob: name, kind, size

 private:
  void add(Knob knob);
  std::vector<Knob> knobs_;
};

/// The factor lists of `extent` into `numOutputs` parts under a policy (exposed for tests).
std::vector<std::vector<int64_t>> splitCandidates(int64_t extent, const SplitOptions& options);

}  // namespace tessel::tune::autotvm
