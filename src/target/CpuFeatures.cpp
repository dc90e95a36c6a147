#include "target/CpuFeatures.h"

#include <map>

namespace tessel::target {

namespace {

/// Each tracked feature with the features it needs (GCC's implications, gcc/common/config/i386
/// and the AArch64 option extensions): the direct prerequisites only.
const std::map<std::string, std::vector<std::string>>& prerequisites() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"sse4.2", {}},
      {"avx", {"sse4.2"}},
      {"avx2", {"avx"}},
      {"fma", {"avx"}},
      {"f16c", {"avx"}},
      {"avxvnni", {"avx2"}},
      {"avx512f", {"avx2", "fma", "f16c"}},
      {"avx512cd", {"avx512f"}},
      {"avx512bw", {"avx512f"}},
      {"avx512dq", {"avx512f"}},
      {"avx512vl", {"avx512f"}},
      {"avx512vnni", {"avx512f"}},
      {"avx512bf16", {"avx512bw"}},
      {"avx512fp16", {"avx512bw"}},
      {"amx-tile", {}},
      {"amx-int8", {"amx-tile"}},
      {"amx-bf16", {"amx-tile"}},
      {"neon", {}},
      {"dotprod", {"neon"}},
      {"fp16", {"neon"}},
      {"bf16", {"neon"}},
      {"i8mm", {"neon"}},
      {"sve", {"fp16"}},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& trackedCpuFeatures(const std::string& arch) {
  static const std::vector<std::string> x86 = {"sse4.2",   "avx",      "avx2",       "fma",        "f16c",       "avxvnni",
                                               "avx512f",  "avx512cd", "avx512bw",   "avx512dq",   "avx512vl",   "avx512vnni",
                                               "avx512bf16", "avx512fp16", "amx-tile", "amx-int8",   "amx-bf16"};
  static const std::vector<std::string> arm = {"neon", "dotprod", "fp16", "bf16", "i8mm", "sve"};
  static const std::vector<std::string> none;
  if (arch == "x86_64") return x86;
  if (arch == "aarch64" || arch == "arm") return arm;
  return none;
}

void addCpuFeature(CpuFeatureSet& set, const std::string& feature) {
  if (!set.insert(feature).second) return;
  auto it = prerequisites().find(feature);
  if (it == prerequisites().end()) return;
  for (const auto& needed : it->second) addCpuFeature(set, needed);
}

void removeCpuFeature(CpuFeatureSet& set, const std::string& feature) {
  if (!set.erase(feature)) return;
  for (const auto& [dependent, needs] : prerequisites())
    for (const auto& needed : needs)
      if (needed == feature) removeCpuFeature(set, dependent);
}

std::vector<std::string> missingCpuFeatures(const std::vector<std::string>& required, const CpuFeatureSet& present) {
  std::vector<std::string> missing;
  for (const auto& feature : required)
    if (!present.count(feature)) missing.push_back(feature);
  return missing;
}

}  // namespace tessel::target
