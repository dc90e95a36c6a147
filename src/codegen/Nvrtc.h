/// Compiles CUDA C to a cubin with NVRTC, the CUDA toolkit's runtime compiler, loaded with
/// dlopen so that tessel builds and runs without the toolkit (a CUDA build then fails with a
/// message saying what is missing). NVRTC needs no GPU: this machine compiles every CUDA kernel
/// of the tests. Looked for as libnvrtc.so (the library search path), then in $CUDA_HOME/lib64
/// and /usr/local/cuda/lib64.
#pragma once
#include <string>

namespace tessel::codegen {

/// Whether NVRTC could be loaded; `why`, when given, receives the reason it could not.
bool nvrtcAvailable(std::string* why = nullptr);

/// The NVRTC version as "13.0".
std::string nvrtcVersion();

/// Compiles `source` for the architecture (`sm_90`) to a cubin. Throws Error with NVRTC's log
/// and the source's first lines for a compile error, or saying NVRTC is missing.
std::string compileCudaToCubin(const std::string& source, const std::string& arch = "sm_90");

}  // namespace tessel::codegen
