/// Compiles CUDA C to a cubin with NVRTC, the CUDA toolkit's runtime compiler, loaded with
/// dlopen so that tessel builds and runs without the toolkit (a CUDA build then fails with a
/// message saying what is missing). NVRTC needs no GPU: this machine compiles every CUDA kernel
/// of the tests. Looked for as libnvrtc.so (the library search path), then in $CUDA_HOME/lib64
/// and /usr/local/cuda/lib64.
#pragma once
#include <string>
#include <vector>

#include "target/Target.h"

namespace tessel::codegen {

/// Whether NVRTC could be loaded; `why`, when given, receives the reason it could not.
bool nvrtcAvailable(std::string* why = nullptr);

/// The NVRTC version as "13.0".
std::string nvrtcVersion();

/// Whether a compile may take its cubin from the cache of cubins and leave its own there.
enum class CubinCache { kUse, kSkip };

/// The NVRTC options a CUDA target compiles with: its architecture (`--gpu-architecture=sm_90`)
/// and, for `-opt-level=0` or `1`, NVRTC's fast-compile mode (`--Ofast-compile=mid` or `min`),
/// which trades the kernels' speed for a compile about 2.7x (mid) or 2x (min) as fast (resnet-18's
/// 20 kernels, CUDA 13: 3.2 and 4.2 s against 8.7 s); 2 and 3 are NVRTC's full optimization.
std::vector<std::string> nvrtcOptionsOf(const target::Target& target);

/// Compiles `source` for a CUDA target to a cubin. With CubinCache::kUse, a cubin NVRTC made of
/// the same source with the same options and NVRTC version is taken from the cache of cubins
/// ($TESSEL_CUDA_CACHE, "off" to disable; else $XDG_CACHE_HOME/tessel/cuda or
/// ~/.cache/tessel/cuda: support/BinaryCache.h) and a new one is kept there: a network built
/// again compiles nothing. Throws Error with NVRTC's log and the source's first lines for a
/// compile error, or saying NVRTC is missing.
std::string compileCudaToCubin(const std::string& source, const target::Target& target, CubinCache cache = CubinCache::kSkip);

}  // namespace tessel::codegen
