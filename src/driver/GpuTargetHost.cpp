#include "driver/GpuTargetHost.h"

#include "codegen/Toolchain.h"
#include "support/Error.h"

namespace tessel::driver {

std::string checkGpuTargetHost(const std::string& target, const std::string& targetHost) {
  bool cpu = targetHost.rfind("cpu", 0) == 0 || targetHost.rfind("llvm", 0) == 0;
  std::string why = "a GPU target's host is the CPU beside the device (e.g. \"cpu -mtriple=aarch64-linux-gnu\"): GPU modules "
                    "have no host code, the host compiles the correctness reference --check-correctness runs there";
  TESSEL_CHECK(cpu, "--target-host '{}' with --target '{}': not a CPU target; {}", targetHost, target, why);
  std::string host = targetHost.rfind("llvm", 0) == 0 ? "cpu" + targetHost.substr(4) : targetHost;
  try {
    codegen::compileOptionsForTarget(target::Target::parse(host));
  } catch (const Error& e) {
    fail("--target-host '{}': {}", targetHost, e.what());
  }
  return host;
}

}  // namespace tessel::driver
