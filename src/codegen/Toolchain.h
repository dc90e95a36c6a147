/// Calls the system C++ compiler to turn generated source into a shared library the runtime
/// can load. A failure raises an Error carrying the compiler's message and the path of the
/// generated source, which is kept for inspection.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace tessel::codegen {

struct CompileOptions {
  // The gcc driver compiles the C++ source (-x c++) but links without libstdc++, which the
  // kernels never use: 10% less build time than g++.
  std::string compiler = "gcc";
  // -O2: the generated code spells out its vectors and unrolling, so -O3 only adds compile
  // time (measured equal kernel speed on SGEMM and conv2d, about 20% less compile time).
  std::vector<std::string> flags = {"-O2", "-march=native"};
  std::chrono::milliseconds timeout{120000};
};

/// Where a build's time went.
struct CompileTimes {
  double compileSeconds = 0;  ///< the compiler (to an object file)
  double linkSeconds = 0;     ///< the linker (0 when the compiler links in the same call)
};

/// Writes `source` to `<outputPath>.cpp` and compiles it to `outputPath`; `times`, when given,
/// receives where the time went.
void compileSharedLibrary(const std::string& source, const std::string& outputPath, const CompileOptions& options = {},
                          CompileTimes* times = nullptr);

/// Options from a target string's flags: `-mcpu=X` (-march=X), `-mattr=+avx2,...`, `-opt-level=N`
/// (-ON, default 2), `-cc=clang++`, `-mtriple=aarch64-linux-gnu` (cross-compiles with
/// aarch64-linux-gnu-gcc for the architecture's baseline; the kernels run on a remote device),
/// `-num-cores=N` (read by targetCores, not a compiler flag).
CompileOptions compileOptionsForTarget(const std::string& target);

/// The cores the kernels are scheduled for, `-num-cores=N` of a CPU target (as TVM's llvm
/// targets say it); 0 when the target does not say (this machine's). Error for a bad value.
int targetCores(const std::string& target);

/// The class of CPU the compiler of `options` generates code for, from the macros it predefines
/// with those flags: "x86_64-avx512" (AVX-512F), "x86_64-avx2", "x86_64", "aarch64", "arm", or
/// "" when it cannot tell (the compiler failed, or another architecture). It keys the records
/// shipped with tessel, so it asks the compiler rather than this process: -mcpu=, -mattr= and
/// -mtriple= change the answer as they change the kernels. Cached per compiler and flags.
std::string cpuClass(const CompileOptions& options);

}  // namespace tessel::codegen
