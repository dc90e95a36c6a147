/// Builds lowered GPU kernels for a target into what the runtime loads (runtime/GpuModule.h):
/// for "cuda -arch=sm_NN" CUDA C compiled by NVRTC to a cubin; for "opencl ..." the OpenCL C
/// source itself, which the device's driver builds when the module is loaded.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "codegen/GpuSource.h"
#include "target/Target.h"

namespace tessel::codegen {

struct GpuBinary {
  GpuSource source;         ///< the generated source and manifest
  std::string code;         ///< the cubin (CUDA) or the OpenCL C source
  std::string manifestText() const { return source.manifest.dump(); }
};

/// The dialect of a GPU target ("cuda ...", "opencl ..."); Error for anything else.
GpuDialect gpuDialectOfTarget(const target::Target& target);

/// Generates and, for CUDA, compiles for the target's -arch. Errors name the kernel (codegen)
/// or carry NVRTC's log.
GpuBinary buildGpuKernels(const std::vector<passes::GpuLoweredFunction>& kernels, const target::Target& target);

/// Writes manifest.json and kernels.cubin / kernels.cl into `directory` (created if needed),
/// plus the CUDA source as kernels.cu for reading.
void saveGpuModule(const GpuBinary& binary, const std::string& directory);

}  // namespace tessel::codegen
