/// GPU source generation: loop IR lowered for a GPU (passes::lowerForGpu) -> CUDA C or OpenCL C,
/// one kernel function per lowered function, plus the manifest the runtime loads it with (the
/// CPU manifest's fields, and each kernel's launch). Loops bound to blockIdx/threadIdx become
/// the index of that dimension (guarded where the loop is shorter than the launch), shared
/// buffers are declared at the top of the kernel (OpenCL requires it), local buffers are
/// per-thread arrays, barrier pragmas become __syncthreads() / barrier(CLK_LOCAL_MEM_FENCE).
/// Index arithmetic is 32-bit (`int`) where every index value of the kernel fits
/// (codegen/GpuIndexWidth.h), else 64-bit as in the CPU code; a floor division or modulo of a
/// non-negative value by a positive constant is C's / and %.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "passes/Lower.h"

namespace tessel::codegen {

enum class GpuDialect { Cuda, OpenCL };
/// "cuda", "opencl": also the device kind of the manifest.
const char* gpuDialectName(GpuDialect dialect);

struct GpuSource {
  GpuDialect dialect;
  std::string code;           ///< the translation unit
  nlohmann::json manifest;    ///< {"device": "cuda", "kernels": [{"name", "args", "num_outputs", "launch"}]}
};

/// Throws Error naming the kernel and the construct for what the GPU code cannot express
/// (vector expressions, float16 or bool buffers, a parallel loop).
GpuSource generateGpuSource(const std::vector<passes::GpuLoweredFunction>& kernels, GpuDialect dialect);

}  // namespace tessel::codegen
