#include "target/CpuMachine.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessel::target {

namespace {

/// The caches assumed for a class when neither the machine nor the table says:
/// AVX-512: Skylake-SP, Cascade Lake and Zen 4 cores (32 KiB L1d, 1 MiB L2);
/// AVX2: Zen 2 and Zen 3 cores (32 KiB L1d, 512 KiB L2; Intel's AVX2 client cores have 256 KiB);
/// SSE: Nehalem-era cores (32 KiB, 256 KiB); AArch64: Cortex-A72-class clusters (32 KiB L1d,
/// 512 KiB of L2 per core's share); 32-bit ARM: Cortex-A9/A15-class (32 KiB, 256 KiB).
struct CacheFallback {
  int64_t l1d, l2, llc;
};

CacheFallback cacheFallbackOf(IsaClass isa) {
  constexpr int64_t KiB = 1024, MiB = 1024 * 1024;
  switch (isa) {
    case IsaClass::X86_64Avx512: return {32 * KiB, 1 * MiB, 16 * MiB};
    case IsaClass::X86_64Avx2: return {32 * KiB, 512 * KiB, 8 * MiB};
    case IsaClass::X86_64: return {32 * KiB, 256 * KiB, 4 * MiB};
    case IsaClass::Aarch64: return {32 * KiB, 512 * KiB, 1 * MiB};
    case IsaClass::Arm: return {32 * KiB, 256 * KiB, 512 * KiB};
  }
  return {32 * KiB, 256 * KiB, 1 * MiB};
}

}  // namespace

std::string isaClassName(IsaClass isa) {
  switch (isa) {
    case IsaClass::X86_64: return "x86_64";
    case IsaClass::X86_64Avx2: return "x86_64-avx2";
    case IsaClass::X86_64Avx512: return "x86_64-avx512";
    case IsaClass::Aarch64: return "aarch64";
    case IsaClass::Arm: return "arm";
  }
  return "?";
}

IsaClass CpuMachine::isa() const {
  if (arch == "aarch64") return IsaClass::Aarch64;
  if (arch == "arm") return IsaClass::Arm;
  if (has("avx512f")) return IsaClass::X86_64Avx512;
  if (has("avx2")) return IsaClass::X86_64Avx2;
  return IsaClass::X86_64;
}

std::vector<std::string> CpuMachine::requiredFeatures() const {
  std::vector<std::string> required;
  for (const auto& feature : trackedCpuFeatures(arch))
    if (has(feature)) required.push_back(feature);
  return required;
}

void CpuMachine::deriveVectorFacts() {
  if (arch == "x86_64") {
    vectorBytes = has("avx512f") ? 64 : has("avx") ? 32 : 16;
    vectorRegisters = has("avx512f") ? 32 : 16;  // zmm0-31 (and ymm16-31 with VL); else xmm/ymm0-15
  } else {
    vectorBytes = 16;                              // NEON q registers
    vectorRegisters = arch == "aarch64" ? 32 : 16; // v0-v31 on AArch64, q0-q15 on 32-bit ARM
  }
}

void CpuMachine::fillCacheFallbacks() {
  if (l1dBytes > 0 && l2Bytes > 0 && llcBytes > 0) return;
  CacheFallback fallback = cacheFallbackOf(isa());
  if (l1dBytes <= 0) l1dBytes = fallback.l1d;
  if (l2Bytes <= 0) l2Bytes = fallback.l2;
  if (llcBytes <= 0) llcBytes = std::max(fallback.llc, l2Bytes);
  std::string note = "the " + isaClass() + " fallback where unknown";
  cachesFrom = cachesFrom.empty() ? note : cachesFrom + "; " + note;
}

std::string formatBytes(int64_t bytes) {
  constexpr int64_t KiB = 1024, MiB = 1024 * 1024;
  if (bytes >= MiB && bytes % (MiB / 4) == 0) return fmt::format("{:g} MiB", double(bytes) / MiB);
  if (bytes >= KiB && bytes % KiB == 0) return fmt::format("{} KiB", bytes / KiB);
  return fmt::format("{} B", bytes);
}

std::string CpuMachine::summary() const {
  return fmt::format("{} ({}): {}-byte vectors x {} registers, {} FMA unit{}, L1d {}, L2 {}, LLC {}, {} core{}", isaClass(), name,
                     vectorBytes, vectorRegisters, fmaUnits, fmaUnits == 1 ? "" : "s", formatBytes(l1dBytes), formatBytes(l2Bytes),
                     formatBytes(llcBytes), cores, cores == 1 ? "" : "s");
}

std::string CpuMachine::tuningNote() const {
  if (!tilesFollowTuning()) return "";
  return zenTuning ? "; Zen tuning: a register tile keeps no register for the broadcast input"
                   : "; a register tile keeps one register for the broadcast input";
}

std::string CpuMachine::describe() const {
  std::string features;
  for (const auto& f : requiredFeatures()) features += (features.empty() ? "" : " ") + f;
  return fmt::format(
      "cpu {} ({})\n"
      "  class            {}\n"
      "  features         {} (from {})\n"
      "  vectors          {} bytes x {} registers, {} FMA unit{} per core{}\n"
      "  caches           L1d {}, L2 {}, LLC {} (from {})\n"
      "  cores            {} (from {})\n",
      name, arch, isaClass(), features.empty() ? "(baseline)" : features, featuresFrom, vectorBytes, vectorRegisters, fmaUnits,
      fmaUnits == 1 ? "" : "s", tuningNote(), formatBytes(l1dBytes), formatBytes(l2Bytes), formatBytes(llcBytes), cachesFrom, cores,
      coresFrom);
}

}  // namespace tessel::target
