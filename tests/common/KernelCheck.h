/// Test support: compile a scheduled State into a real shared library, run it through the
/// runtime on seeded random inputs, and compare every output with the reference evaluator.
/// The pieces are also available one by one (reference data, running a loaded kernel) so
/// that a test with many schedules of one DAG (the fuzzer) evaluates the reference once and
/// compiles many kernels into one library.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/Toolchain.h"
#include "common/LoopIrEvaluator.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "schedule/State.h"
#include "te/ReferenceEvaluator.h"

namespace tessel::kernelcheck {

struct KernelCheckResult {
  double maxRelativeError = 0;
  std::string source;  ///< the generated C++ source
};

/// Throws (with the source path) on a compile failure; the caller asserts on the error.
KernelCheckResult checkAgainstReference(const schedule::State& state, uint64_t seed,
                                        const codegen::CompileOptions& options = {});

/// `base` (the default options) plus trapping bounds checks on the kernel's local arrays: a
/// kernel that writes past one of its local buffers dies (SIGILL) instead of corrupting its
/// stack, which may or may not change its results.
codegen::CompileOptions boundsCheckedOptions(codegen::CompileOptions base = {});

/// The options of the sweeps that check the numbers of many schedules (every zoo task's
/// configs, random sketch states): bounds-checked, at -O0. What they check is the schedules,
/// the lowering and the code the generator prints, whose results no optimization level changes
/// (no fast-math; vector types compute lane by lane either way), and -O0 compiles generated
/// kernels about 3.5x faster than -O2 (resnet-18's kernels at 32x32: 0.60 s against 2.2 s; -O1
/// takes as long as -O2 on them). The code at the optimization users get is checked by the
/// schedule fuzzer, the default schedules' tests and whole networks through `tessel compile`.
codegen::CompileOptions sweepOptions();

/// max |got - ref| / max(|ref|, floor): the error measure of the fuzzer, with `floor` at 1e-3 of
/// the largest reference magnitude so that cancellation near zero does not dominate.
double relativeError(const std::vector<double>& got, const std::vector<double>& reference);

/// Seeded inputs of a DAG and the reference evaluator's outputs for them.
struct ReferenceData {
  te::ComputeDAG dag;
  te::TensorValues inputs;     ///< every input's elements, row-major
  te::TensorValues reference;  ///< every output's elements, row-major
  bool integerOutputs = true;  ///< every output has an integer dtype: results must match exactly
};

/// Inputs uniform in [0, 1) for floats, integers in [-8, 8] (non-negative for unsigned).
ReferenceData makeReferenceData(const te::ComputeDAG& dag, uint64_t seed);

/// Runs a kernel of `data.dag` on fresh tensors holding the reference inputs (outputs start as
/// garbage, so an element the kernel never writes shows) and returns the largest relative
/// error over all outputs.
double runAndCompare(const runtime::Kernel& kernel, const ReferenceData& data);

/// runAndCompare without a compiler: the function runs in the loop-IR evaluator (common/
/// LoopIrEvaluator.h), which also throws an Error on an out-of-bounds access, a read of an
/// element never written or a division by zero.
double evaluateAndCompare(const LoopIrEvaluator& evaluator, const ReferenceData& data);
double evaluateAndCompare(const passes::LoweredFunction& function, const ReferenceData& data);

/// Compiles many kernels with one compiler run per `perLibrary` of them at most, and in at least
/// as many runs as there are cores (bounds-checked, in a temporary directory, one compiler run
/// per core at a time, with sweepOptions()), and calls `check(i, kernel)` for each, in order, on the calling thread:
/// how a test of thousands of schedules keeps its compile time in check.
void compileInBatches(const std::vector<passes::LoweredFunction>& functions, size_t perLibrary,
                      const std::function<void(size_t, const runtime::Kernel&)>& check);

/// The seed of a randomized test: TESSEL_FUZZ_SEED if set, else a random one; printed with how
/// to replay it.
uint64_t fuzzSeed();

/// True if `error` is acceptable: exact for integer outputs, at most `tolerance` otherwise.
inline bool withinTolerance(double error, const ReferenceData& data, double tolerance = 1e-5) {
  return data.integerOutputs ? error == 0 : error <= tolerance;
}

}  // namespace tessel::kernelcheck
