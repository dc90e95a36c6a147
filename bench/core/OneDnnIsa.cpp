#include "OneDnnIsa.h"

#include <cstdlib>

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include "support/Error.h"
#include "target/HostCpu.h"

namespace tessel::bench {

std::string limitOneDnnToTarget(const target::Target& target) {
  if (const char* env = std::getenv("ONEDNN_MAX_CPU_ISA")) return fmt::format("oneDNN: ONEDNN_MAX_CPU_ISA={} (from the environment)", env);
  const target::CpuMachine& host = target::hostCpu();
  if (target.runsOnHost() && target.cpu.isaClass() == host.isaClass()) return "oneDNN: every ISA extension of this CPU";
  dnnl_cpu_isa_t isa = dnnl_cpu_isa_all;
  const char* name = "all";
  switch (target.cpu.isa()) {
    case target::IsaClass::X86_64Avx512: isa = dnnl_cpu_isa_avx512_core, name = "AVX512_CORE"; break;
    case target::IsaClass::X86_64Avx2: isa = dnnl_cpu_isa_avx2, name = "AVX2"; break;
    case target::IsaClass::X86_64: isa = dnnl_cpu_isa_sse41, name = "SSE41"; break;
    default: fail("oneDNN cannot be limited to {}: the bench compares x86-64 targets", target.cpu.isaClass());
  }
  TESSEL_CHECK(dnnl_set_max_cpu_isa(isa) == dnnl_success, "oneDNN refused to be limited to {} (a primitive was made before?)", name);
  return fmt::format("oneDNN: limited to {} (the target's class, {})", name, target.cpu.isaClass());
}

}  // namespace tessel::bench
