/// The host target of a GPU target ("cuda ...", "opencl ..."): the CPU beside the device, which
/// every GPU network flow (compile, tune, the Python package's build) checks the same way.
#pragma once
#include <string>

namespace tessel::driver {

/// Checks `--target-host` of a GPU target and returns it (llvm spelled cpu). A GPU module has
/// no host code: the host target is where the device's host CPU runs the correctness reference
/// of `tune --check-correctness` (the naive kernel, compiled for it). Error naming the value
/// when it is not a CPU target the toolchain can compile for.
std::string checkGpuTargetHost(const std::string& target, const std::string& targetHost);

}  // namespace tessel::driver
