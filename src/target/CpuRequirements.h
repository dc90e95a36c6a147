/// What a compiled module needs of the CPU it runs on: the ISA class its kernels were compiled
/// for and every instruction-set feature the compiler was allowed to use. The module's library
/// carries it as text (the `tessel_module_requires` data symbol of support/KernelAbi.h) and the
/// runtime checks it against this CPU before any kernel runs: a module compiled with
/// -mcpu=skylake-avx512 refuses to load on an AVX2 CPU with a message naming both, instead of
/// dying of SIGILL in its first AVX-512 instruction.
///
/// Text form: "<class>: <feature> <feature> ...", e.g. "x86_64-avx2: sse4.2 avx avx2 fma f16c".
#pragma once
#include <string>
#include <vector>

#include "target/CpuMachine.h"

namespace tessel::target {

struct CpuRequirements {
  std::string isaClass;
  std::string arch;                   ///< the architecture the class belongs to
  std::vector<std::string> features;  ///< tracked features, in trackedCpuFeatures order

  /// What kernels compiled for `machine` may use.
  static CpuRequirements of(const CpuMachine& machine);
  /// Parses the text form; Error naming `where` when it is not one.
  static CpuRequirements parse(const std::string& text, const std::string& where);
  std::string text() const;
  /// The features `present` lacks, and the architecture if it differs ("x86_64" on an aarch64 CPU).
  std::vector<std::string> missingOn(const std::string& cpuArch, const CpuFeatureSet& present) const;
};

}  // namespace tessel::target
