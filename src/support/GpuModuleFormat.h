/// The files of a GPU module directory, shared by the writer (codegen/GpuBuild.h) and the
/// loader (runtime/GpuModule.h): the manifest and the code, a cubin or OpenCL C source.
#pragma once

namespace tessel {

inline constexpr const char* kGpuManifestFile = "manifest.json";
inline constexpr const char* kCudaCodeFile = "kernels.cubin";
inline constexpr const char* kOpenclCodeFile = "kernels.cl";
/// The CUDA C the cubin was compiled from, kept beside it for reading (not loaded).
inline constexpr const char* kCudaSourceFile = "kernels.cu";

}  // namespace tessel
