/// The tuned network timed against the untuned one on this machine, as driver::tuneNetwork
/// evaluates a run: both modules loaded with zero inputs and timed in alternation (10 rounds
/// of at least 100 ms each), so that the speedup reported is a same-run ratio that a drift in
/// the machine's speed hits alike.
#pragma once
#include <string>

#include "driver/TuneNetworkResult.h"
#include "runtime/Device.h"

namespace tessel::driver {

/// The modules in `tunedDirectory` and `untunedDirectory` timed in alternation on `device`,
/// `repeat` rounds.
NetworkEvaluation timeAgainstUntuned(const std::string& tunedDirectory, const std::string& untunedDirectory,
                                     const runtime::Device& device, int repeat);

}  // namespace tessel::driver
