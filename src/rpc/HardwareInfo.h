/// The hardware parameters a device server reports when asked (the seeds read them over RPC
/// before choosing schedules): architecture, cores, SIMD vector width and cache sizes, from this
/// machine's model (target::hostCpu()). A server whose worker runs under emulation (qemu-user)
/// reports the emulated architecture by option; see DeviceServerOptions. The peak rate lets a
/// client refuse timings the device cannot have measured (tune/PlausibleCost.h).
#pragma once
#include <cstdint>
#include <string>

#include "passes/GpuLimits.h"

namespace tessel::rpc {

struct HardwareInfo {
  std::string arch;           ///< "x86_64", "aarch64"
  int cores = 0;              ///< online logical cores
  int vectorBits = 0;         ///< widest SIMD register: 512 (AVX-512), 256 (AVX), 128 (SSE, NEON)
  int64_t l1CacheBytes = 0;   ///< per core, data; 0 when unknown
  int64_t l2CacheBytes = 0;
  int64_t l3CacheBytes = 0;   ///< shared last level; 0 when there is none or it is unknown
  std::string worker;         ///< the server's measurement worker command
  /// The fp32 FMA peak of what the candidates run on, in GFLOPS (target/PeakFlops.h): an upper
  /// bound, not an estimate. 0 when unknown (a GPU, an emulated architecture, VTA): then only
  /// the floor of a measured cost is checked.
  double peakGflops = 0;
  /// A server measuring on a GPU (`--device cuda|opencl[:N]`): the device ("opencl:0") and its
  /// limits, as the driver reports them (vthread extent and local memory: the kind's profile).
  /// Empty device: the server measures CPU kernels.
  std::string gpuDevice;
  passes::GpuLimits gpuLimits;
  /// "x86_64, 16 cores, 512-bit vectors, L1 48 KiB, L2 2048 KiB, L3 107520 KiB, peak 6144 GFLOPS".
  std::string toString() const;
};

/// This machine's parameters.
HardwareInfo queryHostHardware();

/// What can be said of an emulated `arch` (qemu-user) on this machine: the host's cores (the
/// emulator runs its threads on them), the vector width of the architecture's baseline
/// (target::knownCpu), caches and peak unknown (0): emulated timings say nothing of a device.
HardwareInfo emulatedHardware(const std::string& arch);

}  // namespace tessel::rpc
