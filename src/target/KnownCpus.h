/// The machine models of CPUs named by `-mcpu=` (GCC's -march / -mcpu names) and of each
/// architecture's baseline, for targets that are not this machine: what a module compiled with
/// `-mcpu=haswell` may use and how its schedules are shaped, without a Haswell at hand.
/// Cache sizes are those of the part most often met under the name (a Xeon Gold for
/// skylake-avx512, a Zen 3 EPYC for znver3); a target string can override any fact.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "target/CpuMachine.h"

namespace tessel::target {

/// The model of `name` on `arch` ("x86_64", "aarch64", "arm"); nothing when the name is unknown.
/// Cores are left at 1 and unknown caches at 0 (the caller fills them).
std::optional<CpuMachine> knownCpu(const std::string& arch, const std::string& name);

/// The names knownCpu accepts for `arch`, in table order.
std::vector<std::string> knownCpuNames(const std::string& arch);

/// The -mcpu name of an architecture's baseline: "x86-64-v2", "armv8-a", "armv7-a".
std::string baselineCpuName(const std::string& arch);

}  // namespace tessel::target
