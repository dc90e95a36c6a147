/// Random valid step lists for the schedule fuzzer. The generator walks the current State to
/// propose a step (or a short run of steps that belong together, e.g. a cache_write and the
/// compute_at of its cache stage) with iterators and stages that exist, applies it to a copy
/// of the state, and keeps it only if the schedule language accepts it; a rejected proposal
/// is dropped and another one tried. Every kept list therefore replays and lowers.
///
/// A proposal that fails with anything but an ordinary tessel::Error (an internal check, a
/// standard-library exception) is not a rejection but a compiler bug: generation stops and
/// reports it with the list so far and the offending step.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "schedule/Steps.h"

namespace tessel::fuzz {

/// Steps by label (kind, refined where a kind has variants: split.factors, annotate.vectorize).
struct StepStats {
  std::map<std::string, int64_t> accepted, rejected;
  int64_t lists = 0, steps = 0;
  void add(const StepStats& other);
  /// One line per label: accepted and rejected counts.
  std::string table() const;
};

/// Every label the generator can produce, so a test can check that each one showed up.
const std::vector<std::string>& allStepLabels();

/// The statistics label of a step.
std::string stepLabel(const schedule::Step& step);

struct GeneratedSteps {
  std::vector<schedule::StepPtr> steps;
  schedule::State state;  ///< the state the generator reached by applying `steps`
  /// Non-empty when a step failed in a way that is a bug; `steps` then ends with that step.
  std::string bug;
};

/// A random list of about `minSteps`..`maxSteps` valid steps for `dag`, fully determined by `seed`.
GeneratedSteps generateSteps(const te::ComputeDAG& dag, uint64_t seed, StepStats& stats, int minSteps = 3,
                             int maxSteps = 14);

}  // namespace tessel::fuzz
