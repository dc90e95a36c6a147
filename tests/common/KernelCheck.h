/// Test support: compile a scheduled State into a real shared library, run it through the
/// runtime on seeded random inputs, and compare every output with the reference evaluator.
#pragma once
#include <cstdint>
#include <string>

#include "schedule/State.h"

namespace tessel::kernelcheck {

struct KernelCheckResult {
  double maxRelativeError = 0;
  std::string source;  ///< the generated C++ source
};

/// Throws (with the source path) on a compile failure; the caller asserts on the error.
KernelCheckResult checkAgainstReference(const schedule::State& state, uint64_t seed);

/// max |got - ref| / max(|ref|, floor): the error measure of the fuzzer, with `floor` at 1e-3 of
/// the largest reference magnitude so that cancellation near zero does not dominate.
double relativeError(const std::vector<double>& got, const std::vector<double>& reference);

}  // namespace tessel::kernelcheck
