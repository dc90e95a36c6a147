/// The measurement worker's side of measuring: one request in, one reply out. It loads a
/// candidate's shared library, fills the kernel's inputs with seeded random values, optionally
/// checks the outputs against a reference kernel run on the same inputs, and times the kernel
/// with the runtime's time evaluator. Runtime-only (no compiler inside), so that the worker can
/// run on a device: it will be cross-compiled and served by the RPC device server.
///
/// The protocol, one JSON object per line (the worker reads requests on stdin and writes replies
/// on stdout; anything the kernels print goes to stderr):
///   worker, once at start:  {"ready": true, "protocol": 1, "pid": 1234}
///   request:  {"id": 7, "library": "/tmp/.../candidate_3.so", "kernel": "matmul",
///              "num_inputs": 2, "seed": 1, "number": 4, "repeat": 3, "min_repeat_ms": 0,
///              "flush_cache": false,
///              "reference": {"library": "...", "kernel": "..."}, "tolerance": 1e-4}
///              ("reference" is optional: without it nothing is checked)
///   a GPU candidate adds "device": "cuda:0" | "opencl:1", and "library" is then the module's
///   manifest.json with "code" its kernels.cubin / kernels.cl (runtime/GpuModule.h); the
///   reference stays a CPU library. "flush_cache" and "cold" are refused for it.
///   reply:    {"id": 7, "error_no": 0, "message": "", "costs": [1.2e-5, ...], "number": 4}
///              (error_no as MeasureErrorNo: 4 for a load or kernel failure, 5 for a wrong
///              answer whose message names the output, element and error; costs empty on error)
#pragma once
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/Module.h"
#include "runtime/Tensor.h"
#include "runtime/TimeEvaluator.h"
#include "tune/MeasureErrorNo.h"

namespace tessel::tune::worker {

inline constexpr int kProtocolVersion = 1;

class MeasureSession {
 public:
  /// Handles one request; never throws (a bad request gets an error reply).
  nlohmann::json handle(const nlohmann::json& request);

 private:
  /// A reference kernel's inputs and outputs for one seed, kept for the next candidates.
  struct ReferenceRun {
    std::string key;
    runtime::Module module;
    std::vector<runtime::Tensor> inputs, outputs;
  };
  const ReferenceRun& referenceRun(const std::string& library, const std::string& kernel, int numInputs, uint64_t seed);
  nlohmann::json measure(const nlohmann::json& request);
  /// A GPU candidate's request (GpuMeasure.cpp): the same steps on the device.
  nlohmann::json measureOnGpu(const nlohmann::json& request);
  /// A copy of randomTensor(spec, seed): the candidates of a task share their inputs, and
  /// drawing a million random numbers for each cost more than running it (about 20 ms).
  runtime::Tensor randomInput(const runtime::ArgSpec& spec, uint64_t seed);

  std::deque<ReferenceRun> references_;  ///< most recent first, a few at most
  struct CachedInput {
    std::string key;
    runtime::Tensor tensor;
  };
  std::deque<CachedInput> inputs_;  ///< most recent first, a few at most
  /// The further argument sets a cold measurement rotates through (copies of `args`), kept for
  /// the task's next candidates: cloning twice the last-level cache for each candidate cost
  /// about 25 ms, more than measuring most of them.
  const std::vector<std::vector<runtime::Tensor>>& coldCopies(const std::vector<runtime::Tensor>& args, uint64_t seed);
  struct ColdCopies {
    std::string key;
    std::vector<std::vector<runtime::Tensor>> sets;
  };
  ColdCopies cold_;  ///< the last task's only: they may take up to a GiB
};

/// Raised inside a request for a failure that is the candidate's: it becomes the reply's error.
struct CandidateFailure {
  MeasureErrorNo errorNo;
  std::string message;
};

/// Error (a bad request) when a candidate's arguments differ from its reference kernel's.
void checkSameSignature(const std::string& candidate, const std::vector<runtime::ArgSpec>& specs, const runtime::Kernel& reference);
/// Throws CandidateFailure (WrongAnswerError) naming the first output off the reference by more
/// than `tolerance` (floats, relative) or at all (integers).
void checkOutputs(const std::vector<runtime::Tensor>& outputs, const std::vector<runtime::Tensor>& expected,
                  const std::vector<runtime::ArgSpec>& specs, int numInputs, double tolerance);
/// number, repeat, min_repeat_ms, flush_cache and stop_above_s of a request.
runtime::TimeEvaluatorOptions timingOfRequest(const nlohmann::json& request);
/// A CPU tensor full of garbage (all bits set: NaN for floats), so that an element a kernel
/// never writes shows as wrong.
runtime::Tensor garbageTensor(const runtime::ArgSpec& spec);

/// One output of a wrong answer: where it is most wrong. Exposed for tests.
struct OutputComparison {
  double maxError = 0;   ///< relative for floats (as the fuzzer measures it), absolute for integers
  int64_t worstIndex = -1;
  double got = 0, expected = 0;
};
/// Compares two tensors of the same dtype and shape element by element.
OutputComparison compareOutputs(const runtime::Tensor& got, const runtime::Tensor& expected);

/// Seeded inputs for a kernel's arguments: floats uniform in [0, 1), integers in [-8, 8]
/// (non-negative for unsigned), bools 0 or 1. Argument i draws from seed + i.
runtime::Tensor randomTensor(const runtime::ArgSpec& spec, uint64_t seed);

}  // namespace tessel::tune::worker
