#include "target/HostCpu.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "target/KnownCpus.h"

namespace tessel::target {

namespace {

#if defined(__x86_64__)
/// The extended control register XCR0: which register states the OS saves, so which of the
/// CPU's vector extensions a process may use (Intel SDM vol. 1, 13.3).
uint64_t readXcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t(edx) << 32) | eax;
}

/// Whether gcc's -march=native tunes for an AMD Zen core here: an AMD (or Hygon, a licensed
/// Zen) CPU of family 17h or later (the family is the base family plus the extended one when
/// the base is 0Fh: AMD CPUID Specification, leaf 1 EAX).
bool readX86ZenTuning() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  if (std::string(vendor) != "AuthenticAMD" && std::string(vendor) != "HygonGenuine") return false;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  unsigned family = (a >> 8) & 0xf;
  if (family == 0xf) family += (a >> 20) & 0xff;
  return family >= 0x17;
}

CpuFeatureSet readX86Features() {
  CpuFeatureSet set;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return set;
  const unsigned leaf1Ecx = c;
  bool osxsave = leaf1Ecx & (1u << 27);
  uint64_t xcr0 = osxsave ? readXcr0() : 0;
  bool avxState = (xcr0 & 0x6) == 0x6;        // SSE and AVX (ymm) state
  bool avx512State = (xcr0 & 0xe6) == 0xe6;   // plus opmask, ZMM_Hi256, Hi16_ZMM
  bool amxState = (xcr0 & 0x60000) == 0x60000; // XTILECFG, XTILEDATA
  auto put = [&](bool present, const char* name) {
    if (present) set.insert(name);
  };
  put(leaf1Ecx & (1u << 20), "sse4.2");
  put(avxState && (leaf1Ecx & (1u << 28)), "avx");
  put(avxState && (leaf1Ecx & (1u << 12)), "fma");
  put(avxState && (leaf1Ecx & (1u << 29)), "f16c");
  unsigned maxLeaf = __get_cpuid_max(0, nullptr);
  if (maxLeaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    unsigned ebx = b, ecx = c, edx = d, subleaves = a;
    put(avxState && (ebx & (1u << 5)), "avx2");
    put(avx512State && (ebx & (1u << 16)), "avx512f");
    put(avx512State && (ebx & (1u << 17)), "avx512dq");
    put(avx512State && (ebx & (1u << 28)), "avx512cd");
    put(avx512State && (ebx & (1u << 30)), "avx512bw");
    put(avx512State && (ebx & (1u << 31)), "avx512vl");
    put(avx512State && (ecx & (1u << 11)), "avx512vnni");
    put(avx512State && (edx & (1u << 23)), "avx512fp16");
    put(amxState && (edx & (1u << 24)), "amx-tile");
    put(amxState && (edx & (1u << 25)), "amx-int8");
    put(amxState && (edx & (1u << 22)), "amx-bf16");
    if (subleaves >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      put(avxState && (a & (1u << 4)), "avxvnni");
      put(avx512State && (a & (1u << 5)), "avx512bf16");
    }
  }
  return set;
}
#endif

#if defined(__aarch64__)
CpuFeatureSet readAarch64Features() {
  CpuFeatureSet set;
  unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  if (hwcap & HWCAP_ASIMD) set.insert("neon");
  if (hwcap & HWCAP_ASIMDDP) set.insert("dotprod");
  if (hwcap & HWCAP_ASIMDHP) set.insert("fp16");
  if (hwcap & HWCAP_SVE) set.insert("sve");
#ifdef HWCAP2_BF16
  if (hwcap2 & HWCAP2_BF16) set.insert("bf16");
#endif
#ifdef HWCAP2_I8MM
  if (hwcap2 & HWCAP2_I8MM) set.insert("i8mm");
#endif
  (void)hwcap2;
  return set;
}
#endif

std::string firstLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// "48K" -> 49152, "2048K" -> 2097152, "32M" -> 33554432; 0 when unreadable.
int64_t parseSysfsSize(const std::string& text) {
  int64_t value = 0;
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') value = value * 10 + (text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  else if (i < text.size() && text[i] == 'M') value <<= 20;
  return value;
}

/// The caches of cpu0 from /sys/devices/system/cpu/cpu0/cache/index*: L1 data, L2 and the
/// largest level as the LLC. False when sysfs says nothing (some VMs hide it).
bool readSysfsCaches(CpuMachine& machine) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = "/sys/devices/system/cpu/cpu0/cache";
  if (!fs::is_directory(dir, ec)) return false;
  int topLevel = 0;
  bool any = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    std::string type = firstLine(entry.path() / "type");
    int level = std::atoi(firstLine(entry.path() / "level").c_str());
    int64_t size = parseSysfsSize(firstLine(entry.path() / "size"));
    if (size <= 0 || type == "Instruction") continue;
    any = true;
    if (level == 1) machine.l1dBytes = size;
    if (level == 2) machine.l2Bytes = size;
    if (level >= topLevel) {
      topLevel = level;
      machine.llcBytes = size;
    }
  }
  return any;
}

/// glibc's answer (from cpuid's cache leaves on x86), where sysfs had none. False when it had
/// none either.
bool readSysconfCaches(CpuMachine& machine) {
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  machine.l1dBytes = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  machine.l2Bytes = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  machine.llcBytes = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
  if (machine.llcBytes <= 0) machine.llcBytes = machine.l2Bytes;
#endif
  return machine.l1dBytes > 0 || machine.l2Bytes > 0;
}

std::string hostModelName() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0 && line.rfind("Model", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

CpuMachine readHostCpu() {
  CpuMachine machine;
  machine.arch = hostArch();
  machine.name = hostModelName();
  machine.features = readHostCpuFeatures();
  machine.featuresFrom = machine.arch == "x86_64" ? "cpuid" : "the auxiliary vector (HWCAP)";
#if defined(__x86_64__)
  machine.zenTuning = readX86ZenTuning();
#endif
  machine.deriveVectorFacts();
  // FMA units cannot be read: the class's usual count (two on current x86 and AArch64 cores).
  auto baseline = knownCpu(machine.arch, machine.isa() == IsaClass::X86_64Avx512 ? "x86-64-v4"
                                         : machine.isa() == IsaClass::X86_64Avx2  ? "x86-64-v3"
                                                                                  : baselineCpuName(machine.arch));
  machine.fmaUnits = baseline ? baseline->fmaUnits : 1;
  if (readSysfsCaches(machine)) machine.cachesFrom = "sysfs";
  else if (readSysconfCaches(machine)) machine.cachesFrom = "sysconf";
  machine.fillCacheFallbacks();
  machine.cores = availableCores();
  machine.coresFrom = "this process's CPU affinity";
  return machine;
}

}  // namespace

std::string hostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__arm__)
  return "arm";
#else
  return "unknown";
#endif
}

CpuFeatureSet readHostCpuFeatures() {
#if defined(__x86_64__)
  return readX86Features();
#elif defined(__aarch64__)
  return readAarch64Features();
#else
  return {};
#endif
}

int availableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

const CpuMachine& hostCpu() {
  static const CpuMachine machine = readHostCpu();
  return machine;
}

}  // namespace tessel::target
