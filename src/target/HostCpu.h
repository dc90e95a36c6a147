/// This machine's CPU as a machine model: its features from cpuid (x86-64) or the auxiliary
/// vector (AArch64), its caches from sysfs (then glibc's sysconf, then the class's fallback),
/// the cores this process may run on (its affinity mask, so a `taskset` or a container's CPU
/// set counts) and its model name. Read once per process.
#pragma once
#include "target/CpuMachine.h"

namespace tessel::target {

/// The host's machine model (cached after the first call).
const CpuMachine& hostCpu();

/// The architecture this process runs on: "x86_64", "aarch64", "arm".
std::string hostArch();

/// The features of this CPU that the operating system lets a process use, read now (not cached):
/// what a module's required features are checked against.
CpuFeatureSet readHostCpuFeatures();

/// The cores this process may run on (sched_getaffinity), at least 1.
int availableCores();

}  // namespace tessel::target
