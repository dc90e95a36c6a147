/// Test support for the template tests: the config whose every boolean knob (padding inlined,
/// kernel width unrolled, weights outer, ...) is the opposite of a given config's, the rest
/// equal — the fallback flipped reaches the branches the default rules never take.
#pragma once
#include <vector>

#include "tune/autotvm/ConfigSpace.h"

namespace tessel::tune::autotvm {

inline ConfigEntity flipped(const ConfigSpace& space, const ConfigEntity& config) {
  std::vector<size_t> choices;
  for (const Knob& k : space.knobs()) {
    auto value = config.value(k.name);
    if (value.is_boolean()) value = !value.get<bool>();
    choices.push_back(*space.optionIndex(k.name, value));
  }
  return space.fromChoices(choices);
}

}  // namespace tessel::tune::autotvm
