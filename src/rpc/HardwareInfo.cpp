#include "rpc/HardwareInfo.h"

#include <fmt/format.h>

#include "target/HostCpu.h"
#include "target/KnownCpus.h"
#include "target/PeakFlops.h"

namespace tessel::rpc {

std::string HardwareInfo::toString() const {
  std::string host = fmt::format("{}, {} cores, {}-bit vectors, L1 {} KiB, L2 {} KiB, L3 {} KiB", arch, cores, vectorBits,
                                 l1CacheBytes >> 10, l2CacheBytes >> 10, l3CacheBytes >> 10);
  if (peakGflops > 0) host += fmt::format(", peak {:.0f} GFLOPS", peakGflops);
  if (gpuDevice.empty()) return host;
  return fmt::format("{}; GPU {}: max_threads_per_block {}, max_shared_memory_per_block {}, warp_size {}, max_vthread_extent {}, "
                     "multi_processor_count {}",
                     host, gpuLimits.profile, gpuLimits.maxThreadsPerBlock, gpuLimits.maxSharedMemoryPerBlock, gpuLimits.warpSize,
                     gpuLimits.maxVThreadExtent, gpuLimits.multiProcessorCount);
}

HardwareInfo emulatedHardware(const std::string& arch) {
  HardwareInfo info;
  info.arch = arch;
  info.cores = target::hostCpu().cores;  // the emulator runs its threads on this machine's cores
  auto baseline = target::knownCpu(arch, target::baselineCpuName(arch));
  info.vectorBits = baseline ? 8 * baseline->vectorBytes : 0;
  return info;
}

HardwareInfo queryHostHardware() {
  const target::CpuMachine& cpu = target::hostCpu();
  HardwareInfo info;
  info.arch = cpu.arch;
  info.cores = cpu.cores;
  info.vectorBits = 8 * cpu.vectorBytes;
  info.l1CacheBytes = cpu.l1dBytes;
  info.l2CacheBytes = cpu.l2Bytes;
  info.l3CacheBytes = cpu.llcBytes;
  info.peakGflops = target::cpuPeakGflops(cpu, target::hostMaxClockGhz());
  return info;
}

}  // namespace tessel::rpc
