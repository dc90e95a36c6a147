/// C++ source generation for the CPU: loop IR -> a translation unit with one exported
/// function per kernel in the C calling convention of support/KernelAbi.h, plus the module
/// manifest. Vectorized loops become GCC vector-extension code (`float __attribute__
/// ((vector_size(64)))`), parallel loops calls of tessel_parallel_for (OpenMP threads that
/// take over a slower thread's iterations; parallelForSource), local buffers stack arrays (heap when large)
/// or, after register promotion, plain variables. Every argument is checked on entry, so a
/// caller that bypasses the runtime still gets an error message, not a crash.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "schedule/LoopNest.h"

namespace tessel::codegen {

using LoweredFunction = schedule::LoopNestFunction;

std::string generateCSource(const std::vector<LoweredFunction>& functions);

/// One function's share of a translation unit, so that functions generated apart (each in an
/// isolated process, as the tuner does) can be compiled together: one compiler run for a
/// batch of candidates costs 40% less than one each (process start-up, the prelude, the link).
struct CFunctionSource {
  std::string name;
  std::string text;                      ///< the function's definition
  std::vector<std::string> vectorTypes;  ///< the typedef lines it needs
  std::vector<std::string> workspaces;   ///< the file-scope workspace pointers it uses
  nlohmann::json manifest;               ///< its manifest entry
  nlohmann::json toJson() const;
  static CFunctionSource fromJson(const nlohmann::json& json);
};
CFunctionSource generateCFunction(const LoweredFunction& function);
/// A translation unit of the functions (distinct names) and their manifest.
std::string assembleCSource(const std::vector<CFunctionSource>& functions);

/// The definition every generated translation unit carries of `tessel_parallel_for(n, body)`,
/// which runs body(0) .. body(n - 1) on the OpenMP threads: each thread first runs the block of
/// iterations schedule(static) would give it, then takes iterations from the back of the
/// blocks still being run, in grains of a sixteenth of a block. Needs <cstdint>'s integer types.
const char* parallelForSource();

/// The manifest JSON of the functions (names, argument names, dtypes, shapes).
std::string manifestJson(const std::vector<LoweredFunction>& functions);

}  // namespace tessel::codegen
