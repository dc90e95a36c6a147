/// Calls the system C++ compiler to turn generated source into a shared library the runtime
/// can load. A failure raises an Error carrying the compiler's message and the path of the
/// generated source, which is kept for inspection.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "target/Target.h"

namespace tessel::codegen {

struct CompileOptions {
  // The gcc driver compiles the C++ source (-x c++) but links without libstdc++, which the
  // kernels never use: 10% less build time than g++.
  std::string compiler = "gcc";
  // -O2: the generated code spells out its vectors and unrolling, so -O3 only adds compile
  // time (measured equal kernel speed on SGEMM and conv2d, about 20% less compile time).
  std::vector<std::string> flags = {"-O2", "-march=native"};
  std::chrono::milliseconds timeout{120000};
  /// What the kernels need of the CPU (target::CpuRequirements' text), recorded in the library;
  /// empty: nothing recorded (the runtime then checks nothing).
  std::string moduleRequires;
};

/// Where a build's time went.
struct CompileTimes {
  double compileSeconds = 0;  ///< the compiler (to an object file)
  double linkSeconds = 0;     ///< the linker (0 when the compiler links in the same call)
};

/// Writes `source` to `<outputPath>.cpp` and compiles it to `outputPath`; `times`, when given,
/// receives where the time went. The tools see absolute paths, so no path reads as an option.
void compileSharedLibrary(const std::string& source, const std::string& outputPath, const CompileOptions& options = {},
                          CompileTimes* times = nullptr);

/// The compiler and flags of a CPU target: `-mcpu=X` (-march=X on x86, -mcpu=X on ARM; an
/// architecture name such as armv8.2-a is -march=), `-mattr=+avx2,-avx512f` (-mavx2 -mno-avx512f),
/// `-opt-level=N` (-ON, default 2), `-cc=clang++`, `-mtriple=aarch64-linux-gnu` (Debian's cross
/// compiler aarch64-linux-gnu-gcc for the architecture's baseline; the kernels run on a remote
/// device). The rest of the target (cores, caches, vector facts) shapes schedules, not flags.
/// The module records the CPU requirements of the target's machine model.
CompileOptions compileOptionsForTarget(const target::Target& target);

}  // namespace tessel::codegen
