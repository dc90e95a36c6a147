#include "target/KnownCpus.h"

#include <sstream>

namespace tessel::target {

namespace {

struct KnownCpuRow {
  const char* arch;
  const char* name;
  const char* features;  ///< space-separated; prerequisites are added
  int l1dKiB, l2KiB, llcKiB;  ///< 0: unknown (the class's fallback)
  int fmaUnits;
};

// Feature sets shared by several rows.
#define HASWELL "avx2 fma f16c"
#define SKYLAKE_SP "avx512f avx512cd avx512bw avx512dq avx512vl"
#define CASCADE_LAKE SKYLAKE_SP " avx512vnni"
#define SAPPHIRE_RAPIDS CASCADE_LAKE " avx512bf16 avx512fp16 avxvnni amx-tile amx-int8 amx-bf16"
#define ZEN4 CASCADE_LAKE " avx512bf16"

// Sources: the vendors' optimization manuals and product pages (Intel 64 and IA-32 Optimization
// Reference Manual, AMD Software Optimization Guides for families 17h/19h/1Ah, Arm Cortex and
// Neoverse technical reference manuals) and GCC's -march definitions for the features.
const KnownCpuRow kRows[] = {
    // x86-64 levels and Intel cores
    {"x86_64", "x86-64", "", 0, 0, 0, 1},
    {"x86_64", "x86-64-v2", "sse4.2", 0, 0, 0, 1},
    {"x86_64", "x86-64-v3", HASWELL, 0, 0, 0, 2},
    {"x86_64", "x86-64-v4", SKYLAKE_SP, 0, 0, 0, 2},
    {"x86_64", "nocona", "", 16, 1024, 0, 1},
    {"x86_64", "core2", "", 32, 2048, 0, 1},
    {"x86_64", "nehalem", "sse4.2", 32, 256, 8192, 1},
    {"x86_64", "corei7", "sse4.2", 32, 256, 8192, 1},
    {"x86_64", "westmere", "sse4.2", 32, 256, 12288, 1},
    {"x86_64", "sandybridge", "avx", 32, 256, 8192, 1},
    {"x86_64", "corei7-avx", "avx", 32, 256, 8192, 1},
    {"x86_64", "ivybridge", "avx f16c", 32, 256, 8192, 1},
    {"x86_64", "core-avx-i", "avx f16c", 32, 256, 8192, 1},
    {"x86_64", "haswell", HASWELL, 32, 256, 8192, 2},
    {"x86_64", "core-avx2", HASWELL, 32, 256, 8192, 2},
    {"x86_64", "broadwell", HASWELL, 32, 256, 8192, 2},
    {"x86_64", "skylake", HASWELL, 32, 256, 8192, 2},
    {"x86_64", "alderlake", HASWELL " avxvnni", 48, 1280, 30720, 2},
    {"x86_64", "raptorlake", HASWELL " avxvnni", 48, 2048, 36864, 2},
    {"x86_64", "meteorlake", HASWELL " avxvnni", 48, 2048, 24576, 2},
    {"x86_64", "skylake-avx512", SKYLAKE_SP, 32, 1024, 22528, 2},
    {"x86_64", "cascadelake", CASCADE_LAKE, 32, 1024, 22528, 2},
    {"x86_64", "cooperlake", CASCADE_LAKE " avx512bf16", 32, 1024, 39424, 2},
    {"x86_64", "cannonlake", SKYLAKE_SP, 32, 256, 4096, 1},
    {"x86_64", "icelake-client", CASCADE_LAKE, 48, 512, 8192, 1},
    {"x86_64", "tigerlake", CASCADE_LAKE, 48, 1280, 12288, 1},
    {"x86_64", "rocketlake", CASCADE_LAKE, 48, 512, 16384, 1},
    {"x86_64", "icelake-server", CASCADE_LAKE, 48, 1280, 49152, 2},
    {"x86_64", "sapphirerapids", SAPPHIRE_RAPIDS, 48, 2048, 107520, 2},
    {"x86_64", "emeraldrapids", SAPPHIRE_RAPIDS, 48, 2048, 327680, 2},
    {"x86_64", "graniterapids", SAPPHIRE_RAPIDS, 48, 2048, 491520, 2},
    {"x86_64", "bonnell", "", 24, 512, 0, 1},
    {"x86_64", "atom", "", 24, 512, 0, 1},
    {"x86_64", "silvermont", "sse4.2", 24, 1024, 0, 1},
    {"x86_64", "goldmont", "sse4.2", 24, 1024, 0, 1},
    {"x86_64", "goldmont-plus", "sse4.2", 24, 1024, 4096, 1},
    {"x86_64", "tremont", "sse4.2", 32, 1536, 4096, 1},
    {"x86_64", "knl", "avx512f avx512cd", 32, 512, 0, 2},
    {"x86_64", "knm", "avx512f avx512cd", 32, 512, 0, 2},
    // AMD cores
    {"x86_64", "k8", "", 64, 1024, 0, 1},
    {"x86_64", "amdfam10", "", 64, 512, 6144, 1},
    {"x86_64", "btver1", "", 32, 512, 0, 1},
    {"x86_64", "btver2", "avx f16c", 32, 2048, 0, 1},
    {"x86_64", "bdver1", "avx", 16, 2048, 8192, 1},
    {"x86_64", "bdver2", "avx fma f16c", 16, 2048, 8192, 1},
    {"x86_64", "bdver3", "avx fma f16c", 16, 2048, 8192, 1},
    {"x86_64", "bdver4", HASWELL, 32, 1024, 0, 1},
    {"x86_64", "znver1", HASWELL, 32, 512, 8192, 1},  // 256-bit FMAs as two 128-bit halves
    {"x86_64", "znver2", HASWELL, 32, 512, 16384, 2},
    {"x86_64", "znver3", HASWELL, 32, 512, 32768, 2},
    {"x86_64", "znver4", ZEN4, 32, 1024, 32768, 1},  // 512-bit FMAs as two 256-bit halves
    {"x86_64", "znver5", ZEN4 " avxvnni", 48, 1024, 32768, 2},
    // AArch64
    {"aarch64", "armv8-a", "neon", 0, 0, 0, 2},
    {"aarch64", "generic", "neon", 0, 0, 0, 2},
    {"aarch64", "armv8.2-a", "neon", 0, 0, 0, 2},
    {"aarch64", "cortex-a53", "neon", 32, 512, 512, 1},
    {"aarch64", "cortex-a55", "neon dotprod fp16", 32, 256, 1024, 1},
    {"aarch64", "cortex-a57", "neon", 32, 2048, 2048, 1},
    {"aarch64", "cortex-a72", "neon", 32, 1024, 1024, 2},
    {"aarch64", "cortex-a73", "neon", 64, 1024, 1024, 2},
    {"aarch64", "cortex-a75", "neon dotprod fp16", 64, 256, 2048, 2},
    {"aarch64", "cortex-a76", "neon dotprod fp16", 64, 512, 2048, 2},
    {"aarch64", "cortex-a77", "neon dotprod fp16", 64, 512, 4096, 2},
    {"aarch64", "cortex-a78", "neon dotprod fp16", 64, 512, 4096, 2},
    {"aarch64", "cortex-x1", "neon dotprod fp16", 64, 1024, 8192, 4},
    {"aarch64", "neoverse-n1", "neon dotprod fp16", 64, 1024, 32768, 2},
    {"aarch64", "neoverse-n2", "neon dotprod fp16 bf16 i8mm sve", 64, 1024, 32768, 2},
    {"aarch64", "neoverse-v1", "neon dotprod fp16 bf16 i8mm sve", 64, 1024, 32768, 4},
    {"aarch64", "neoverse-v2", "neon dotprod fp16 bf16 i8mm sve", 64, 2048, 116736, 4},
    {"aarch64", "a64fx", "neon fp16 sve", 64, 8192, 8192, 2},
    {"aarch64", "thunderx2t99", "neon", 32, 256, 32768, 2},
    {"aarch64", "tsv110", "neon fp16", 64, 512, 32768, 2},
    // 32-bit ARM (hard-float toolchains leave NEON to -mfpu, which tessel does not pass)
    {"arm", "armv7-a", "", 0, 0, 0, 1},
    {"arm", "cortex-a7", "", 32, 512, 512, 1},
    {"arm", "cortex-a9", "", 32, 1024, 1024, 1},
    {"arm", "cortex-a15", "", 32, 2048, 2048, 1},
    {"arm", "cortex-a17", "", 32, 1024, 1024, 1},
};

#undef HASWELL
#undef SKYLAKE_SP
#undef CASCADE_LAKE
#undef SAPPHIRE_RAPIDS
#undef ZEN4

}  // namespace

std::optional<CpuMachine> knownCpu(const std::string& arch, const std::string& name) {
  for (const auto& row : kRows) {
    if (arch != row.arch || name != row.name) continue;
    CpuMachine machine;
    machine.arch = arch;
    machine.name = name;
    std::istringstream words(row.features);
    for (std::string feature; words >> feature;) addCpuFeature(machine.features, feature);
    machine.deriveVectorFacts();
    machine.fmaUnits = row.fmaUnits;
    machine.l1dBytes = int64_t(row.l1dKiB) * 1024;
    machine.l2Bytes = int64_t(row.l2KiB) * 1024;
    machine.llcBytes = int64_t(row.llcKiB) * 1024;
    machine.zenTuning = name.rfind("znver", 0) == 0;
    machine.featuresFrom = "the table of -mcpu names";
    if (row.l1dKiB > 0) machine.cachesFrom = "the table of -mcpu names";
    return machine;
  }
  return std::nullopt;
}

std::vector<std::string> knownCpuNames(const std::string& arch) {
  std::vector<std::string> names;
  for (const auto& row : kRows)
    if (arch == row.arch) names.push_back(row.name);
  return names;
}

std::string baselineCpuName(const std::string& arch) {
  if (arch == "aarch64") return "armv8-a";
  if (arch == "arm") return "armv7-a";
  return "x86-64-v2";
}

}  // namespace tessel::target
