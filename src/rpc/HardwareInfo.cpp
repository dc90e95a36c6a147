#include "rpc/HardwareInfo.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tessel::rpc {

namespace {

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// "48K" -> 49152, "2048K" -> 2097152, "32M" -> 33554432.
int64_t parseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  int64_t value = 0;
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) value = value * 10 + (text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  else if (i < text.size() && text[i] == 'M') value <<= 20;
  return value;
}

/// The SIMD width the CPU's feature flags promise.
int vectorBitsOf(const std::string& arch) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool avx512 = false, avx = false, sse = false, neon = false;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) {
      if (w == "avx512f") avx512 = true;
      if (w == "avx" || w == "avx2") avx = true;
      if (w == "sse2") sse = true;
      if (w == "asimd" || w == "neon") neon = true;
    }
    break;  // the first processor speaks for all
  }
  if (avx512) return 512;
  if (avx) return 256;
  if (sse || neon) return 128;
  return arch == "aarch64" || arch == "x86_64" ? 128 : 0;
}

}  // namespace

std::string HardwareInfo::toString() const {
  std::string host = fmt::format("{}, {} cores, {}-bit vectors, L1 {} KiB, L2 {} KiB, L3 {} KiB", arch, cores, vectorBits,
                                 l1CacheBytes >> 10, l2CacheBytes >> 10, l3CacheBytes >> 10);
  if (gpuDevice.empty()) return host;
  return fmt::format("{}; GPU {}: max_threads_per_block {}, max_shared_memory_per_block {}, warp_size {}, max_vthread_extent {}, "
                     "multi_processor_count {}",
                     host, gpuLimits.profile, gpuLimits.maxThreadsPerBlock, gpuLimits.maxSharedMemoryPerBlock, gpuLimits.warpSize,
                     gpuLimits.maxVThreadExtent, gpuLimits.multiProcessorCount);
}

HardwareInfo emulatedHardware(const std::string& arch) {
  HardwareInfo info;
  info.arch = arch;
  info.cores = int(sysconf(_SC_NPROCESSORS_ONLN));
  info.vectorBits = arch == "aarch64" || arch.rfind("arm", 0) == 0 || arch == "x86_64" ? 128 : 0;
  return info;
}

HardwareInfo queryHostHardware() {
  HardwareInfo info;
  utsname name{};
  if (uname(&name) == 0) info.arch = name.machine;
  info.cores = int(sysconf(_SC_NPROCESSORS_ONLN));
  info.vectorBits = vectorBitsOf(info.arch);
  for (int index = 0; index < 8; ++index) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::string level = firstLine(dir + "level");
    if (level.empty()) break;
    std::string type = firstLine(dir + "type");
    int64_t size = parseCacheSize(firstLine(dir + "size"));
    if (level == "1" && type != "Instruction") info.l1CacheBytes = size;
    if (level == "2") info.l2CacheBytes = size;
    if (level == "3") info.l3CacheBytes = size;
  }
  // Containers often hide /sys/devices/system/cpu/*/cache; glibc reads the sizes from CPUID.
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (info.l1CacheBytes == 0) info.l1CacheBytes = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  if (info.l2CacheBytes == 0) info.l2CacheBytes = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  if (info.l3CacheBytes == 0) info.l3CacheBytes = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
  return info;
}

}  // namespace tessel::rpc
