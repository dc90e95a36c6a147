/// The instruction-set features of a CPU that decide how tessel's kernels are shaped and where a
/// module may run: SIMD extensions (x86: SSE4.2 to AVX-512 and AMX; ARM: NEON, dot products,
/// SVE), named as GCC's -m options and LLVM's -mattr name them ("avx2", "avx512f", "dotprod").
/// A feature implies its prerequisites (AVX-512F needs AVX2 and FMA, as GCC's -mavx512f turns
/// them on), so adding or removing one keeps the set consistent the way the compiler does.
#pragma once
#include <set>
#include <string>
#include <vector>

namespace tessel::target {

/// A set of feature names, kept closed under prerequisites.
using CpuFeatureSet = std::set<std::string>;

/// Every feature tessel tracks for `arch` ("x86_64", "aarch64", "arm"), in a fixed order.
const std::vector<std::string>& trackedCpuFeatures(const std::string& arch);

/// Adds `feature` and, transitively, what it needs (avx512f brings avx2, fma, f16c, avx, sse4.2).
void addCpuFeature(CpuFeatureSet& set, const std::string& feature);

/// Removes `feature` and every feature that needs it (removing avx2 removes every avx512*).
void removeCpuFeature(CpuFeatureSet& set, const std::string& feature);

/// The features `required` names that `present` lacks, in `required`'s order.
std::vector<std::string> missingCpuFeatures(const std::vector<std::string>& required, const CpuFeatureSet& present);

}  // namespace tessel::target
