/// The schedule fuzzer's driver: generates random step lists over the example ops, checks
/// that each one survives a JSON round trip and replays to the same state and code, lowers it,
/// compiles the kernels in batches (many functions per translation unit, batches in
/// parallel) with trapping bounds checks on local arrays, runs every kernel and compares it
/// with the reference evaluator. A failure is reported with everything needed to replay it:
/// seed, case index, op, steps as code and JSON; so is a crash inside a kernel.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/StepGenerator.h"
#include "target/Target.h"
#include "te/ComputeDAG.h"

namespace tessel::fuzz {

struct FuzzConfig {
  /// What the kernels are compiled for: this machine, or a CPU it can run (an AVX2 or baseline
  /// x86-64 target on an AVX-512 host), so that each ISA's vector code is checked.
  target::Target target = target::Target::host();
  uint64_t seed = 1;
  int first = 0;        ///< the index of the first case: a shard runs cases [first, first + cases)
  int cases = 500;
  int only = -1;        ///< >= 0: run just this case index (replay), if it is in the range
  int batchSize = 25;   ///< kernels per compiled library
  int workers = 2;      ///< parallel compiler processes
  bool dumpSource = false;
};

struct FuzzReport {
  StepStats stats;
  int checked = 0;  ///< cases that ran and matched the reference
  int libraries = 0;
  double prepareSeconds = 0, compileSeconds = 0, runSeconds = 0;
  std::vector<std::string> failures;  ///< one self-contained message per failing case
};

/// The ops the fuzzer schedules: every example op at small shapes with non-divisible extents.
struct FuzzOp {
  std::string name;
  te::ComputeDAG dag;
};
std::vector<FuzzOp> fuzzOps();

/// The generator seed of case `index` of a run: cases are independent, so one can be replayed alone.
uint64_t caseSeed(uint64_t seed, int index);

FuzzReport runFuzz(const FuzzConfig& config);

}  // namespace tessel::fuzz
