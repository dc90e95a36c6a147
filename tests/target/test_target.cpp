// The target value: parsing, the machine model of known CPUs and of this machine, -mattr and the
// overrides of the string, and the errors a bad word gets.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "target/CpuRequirements.h"
#include "target/HostCpu.h"
#include "target/KnownCpus.h"
#include "target/PeakFlops.h"
#include "target/Target.h"

namespace tessel {
namespace {

using target::Target;
using target::TargetKind;
using testsupport::errorOf;

TEST(Target, KindsAndFlags) {
  Target t = Target::parse("  llvm   -mcpu=haswell -num-cores=16 -opt-level=3 -mattr=+avx2,-avx512f ");
  EXPECT_EQ(t.kind, TargetKind::Cpu);
  EXPECT_EQ(t.str(), "llvm -mcpu=haswell -num-cores=16 -opt-level=3 -mattr=+avx2,-avx512f");
  EXPECT_EQ(t.kindName(), "cpu");
  EXPECT_EQ(t.mcpu, "haswell");
  EXPECT_EQ(t.numCores, 16);
  EXPECT_EQ(t.optLevel, 3);
  EXPECT_EQ(t.mattr, (std::vector<std::string>{"+avx2", "-avx512f"}));
  EXPECT_FALSE(t.runsOnHost());
  EXPECT_TRUE(Target::parse("cpu").runsOnHost());
  EXPECT_TRUE(Target::parse("cpu -mcpu=native").runsOnHost());
  EXPECT_TRUE(Target::parse("cpu -mtriple=" + target::hostArch() + "-linux-gnu").runsOnHost());

  Target cuda = Target::parse("cuda");
  EXPECT_TRUE(cuda.isGpu());
  EXPECT_EQ(cuda.arch, "sm_90");
  EXPECT_EQ(cuda.matmulPrecision, target::MatmulPrecision::Fp32);  // fp32-accurate products unless asked
  EXPECT_EQ(Target::parse("cuda -matmul-precision=tf32").matmulPrecision, target::MatmulPrecision::Tf32);
  EXPECT_EQ(Target::parse("cuda -matmul-precision=fp32").matmulPrecision, target::MatmulPrecision::Fp32);
  EXPECT_EQ(target::matmulPrecisionName(target::MatmulPrecision::Tf32), "tf32");
  EXPECT_EQ(Target::parse("opencl -device=mali").device, "mali");
  EXPECT_TRUE(Target::parse("vta").isVta());
  EXPECT_EQ(target::targetKindOf("llvm -mcpu=whatever-else"), TargetKind::Cpu);
}

TEST(Target, BadWordsAreNamed) {
  EXPECT_NE(errorOf([] { Target::parse("tpu"); }).find("target 'tpu': unknown kind 'tpu'"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse(""); }).find("empty"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse("cpu -fast"); }).find("unknown option '-fast' for a cpu target"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse("cuda -device=mali"); }).find("unknown option '-device=mali' for a cuda target (known: -arch=, -opt-level=, -matmul-precision=)"),
            std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse("cuda -matmul-precision=fp16"); }).find("-matmul-precision must be fp32 or tf32, got 'fp16'"),
            std::string::npos);
  // The precision is a choice of the CUDA targets' tensor-core products only.
  EXPECT_NE(errorOf([] { Target::parse("cpu -matmul-precision=tf32"); }).find("unknown option '-matmul-precision=tf32' for a cpu target"),
            std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse("opencl -matmul-precision=tf32"); }).find("for a opencl target"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse("cpu -opt-level=5"); }).find("-opt-level must be a number from 0 to 3"), std::string::npos);
  for (const char* bad : {"cpu -num-cores=0", "cpu -num-cores=", "cpu -num-cores=-2", "cpu -num-cores=99999", "cpu -num-cores=4x"})
    EXPECT_NE(errorOf([&] { Target::parse(bad); }).find("-num-cores must be a number from 1 to 9999"), std::string::npos) << bad;
  EXPECT_NE(errorOf([] { Target::parse("cpu -mattr=avx2"); }).find("attribute 'avx2' must start with + or -"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse("cpu -mtriple=riscv64-linux-gnu"); }).find("cannot compile for"), std::string::npos);
  std::string unknown = errorOf([] { Target::parse("cpu -mcpu=pentium9"); });
  EXPECT_NE(unknown.find("unknown CPU 'pentium9'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("haswell"), std::string::npos) << unknown;  // the known names are listed
  EXPECT_NE(errorOf([] { Target::parse("cpu -l2=lots"); }).find("-l2 must be a size such as 512K"), std::string::npos);
  EXPECT_NE(errorOf([] { Target::parse("cpu -vector-bytes=24"); }).find("must be a power of two"), std::string::npos);
}

TEST(Target, KnownCpusGiveTheirMachineModel) {
  auto haswell = Target::parse("cpu -mcpu=haswell").cpu;
  EXPECT_EQ(haswell.isaClass(), "x86_64-avx2");
  EXPECT_EQ(haswell.vectorBytes, 32);
  EXPECT_EQ(haswell.vectorRegisters, 16);
  EXPECT_EQ(haswell.lanes(4), 8);
  EXPECT_EQ(haswell.l2Bytes, 256 * 1024);
  EXPECT_TRUE(haswell.has("fma"));
  EXPECT_FALSE(haswell.has("avx512f"));
  // The broadcast input of a register tile takes a register where the FMA cannot broadcast
  // from memory (x86 without AVX-512) and the compiler's tuning does not fold a weight load
  // into an FMA instead (gcc's Zen tunings do); such tunings have records of their own.
  EXPECT_EQ(haswell.broadcastRegisters(), 1);
  EXPECT_FALSE(haswell.zenTuning);
  EXPECT_EQ(haswell.recordFamily(), "x86_64-avx2");
  EXPECT_EQ(Target::parse("cpu -mcpu=x86-64").cpu.broadcastRegisters(), 1);
  EXPECT_EQ(Target::parse("cpu -mcpu=skylake-avx512").cpu.broadcastRegisters(), 0);
  EXPECT_EQ(Target::parse("cpu -mtriple=aarch64-linux-gnu").cpu.broadcastRegisters(), 0);
  auto zen3 = Target::parse("cpu -mcpu=znver3").cpu;
  EXPECT_TRUE(zen3.zenTuning);
  EXPECT_EQ(zen3.broadcastRegisters(), 0);
  EXPECT_EQ(zen3.recordFamily(), "x86_64-avx2-zen");
  EXPECT_NE(zen3.describe().find("Zen tuning: a register tile keeps no register for the broadcast input"), std::string::npos);
  // With AVX-512 the tuning changes no tile: a Zen 4 shares the class's records.
  auto zen4 = Target::parse("cpu -mcpu=znver4").cpu;
  EXPECT_TRUE(zen4.zenTuning);
  EXPECT_EQ(zen4.broadcastRegisters(), 0);
  EXPECT_EQ(zen4.recordFamily(), "x86_64-avx512");
  EXPECT_EQ(zen4.describe().find("Zen tuning"), std::string::npos);
  EXPECT_EQ(haswell.requiredFeatures(), (std::vector<std::string>{"sse4.2", "avx", "avx2", "fma", "f16c"}));

  auto skx = Target::parse("cpu -mcpu=skylake-avx512").cpu;
  EXPECT_EQ(skx.isaClass(), "x86_64-avx512");
  EXPECT_EQ(skx.vectorBytes, 64);
  EXPECT_EQ(skx.vectorRegisters, 32);
  EXPECT_EQ(skx.l2Bytes, 1024 * 1024);

  auto generic = Target::parse("cpu -mcpu=x86-64").cpu;
  EXPECT_EQ(generic.isaClass(), "x86_64");
  EXPECT_EQ(generic.vectorBytes, 16);
  EXPECT_EQ(generic.l2Bytes, 256 * 1024);  // the class's fallback, stated
  EXPECT_NE(generic.cachesFrom.find("fallback"), std::string::npos);

  auto arm = Target::parse("cpu -mtriple=aarch64-linux-gnu").cpu;
  EXPECT_EQ(arm.isaClass(), "aarch64");
  EXPECT_EQ(arm.vectorBytes, 16);
  EXPECT_EQ(arm.vectorRegisters, 32);
  EXPECT_TRUE(arm.has("neon"));
  auto a72 = Target::parse("cpu -mtriple=aarch64-linux-gnu -mcpu=cortex-a72").cpu;
  EXPECT_EQ(a72.l2Bytes, 1024 * 1024);
  EXPECT_EQ(a72.name, "cortex-a72");
}

TEST(Target, AttributesAddAndRemoveFeaturesWithWhatTheyImply) {
  auto noAvx512 = Target::parse("cpu -mcpu=skylake-avx512 -mattr=-avx512f").cpu;
  EXPECT_EQ(noAvx512.isaClass(), "x86_64-avx2");
  EXPECT_EQ(noAvx512.vectorBytes, 32);
  EXPECT_EQ(noAvx512.vectorRegisters, 16);
  EXPECT_FALSE(noAvx512.has("avx512bw"));  // needs avx512f
  auto plus = Target::parse("cpu -mcpu=x86-64 -mattr=+avx512f,+bmi2").cpu;  // bmi2: a compiler flag only
  EXPECT_EQ(plus.isaClass(), "x86_64-avx512");
  EXPECT_TRUE(plus.has("avx2") && plus.has("fma") && plus.has("avx"));
  auto noAvx = Target::parse("cpu -mcpu=haswell -mattr=-avx").cpu;
  EXPECT_EQ(noAvx.isaClass(), "x86_64");
  EXPECT_FALSE(noAvx.has("avx2") || noAvx.has("fma"));
}

TEST(Target, TheStringOverridesAnyFact) {
  auto m = Target::parse("cpu -mcpu=haswell -l1d=48K -l2=2M -llc=1G -vector-bytes=16 -vector-registers=8 -fma-units=1 -num-cores=64").cpu;
  EXPECT_EQ(m.l1dBytes, 48 * 1024);
  EXPECT_EQ(m.l2Bytes, 2 * 1024 * 1024);
  EXPECT_EQ(m.llcBytes, int64_t(1) << 30);
  EXPECT_EQ(m.vectorBytes, 16);
  EXPECT_EQ(m.vectorRegisters, 8);
  EXPECT_EQ(m.fmaUnits, 1);
  EXPECT_EQ(m.cores, 64);
  EXPECT_EQ(m.coresFrom, "-num-cores");
  EXPECT_NE(m.cachesFrom.find("l2 from the target string"), std::string::npos);
  EXPECT_EQ(target::parseByteSize("1048576", "x"), 1048576);
  EXPECT_EQ(target::parseByteSize("512KiB", "x"), 512 * 1024);
}

// The host's model agrees with what the compiler's own runtime check says of this CPU.
TEST(Target, TheHostModelReadsThisCpu) {
  const auto& host = target::hostCpu();
  EXPECT_EQ(host.arch, target::hostArch());
  EXPECT_GE(host.cores, 1);
  EXPECT_GT(host.l1dBytes, 0);
  EXPECT_GE(host.l2Bytes, host.l1dBytes);
  EXPECT_GE(host.llcBytes, host.l2Bytes);
  EXPECT_FALSE(host.cachesFrom.empty());
#if defined(__x86_64__)
  __builtin_cpu_init();
  EXPECT_EQ(host.has("avx2"), bool(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(host.has("fma"), bool(__builtin_cpu_supports("fma")));
  EXPECT_EQ(host.has("avx512f"), bool(__builtin_cpu_supports("avx512f")));
  EXPECT_EQ(host.vectorBytes, __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx") ? 32 : 16);
  EXPECT_EQ(host.vectorRegisters, __builtin_cpu_supports("avx512f") ? 32 : 16);
#endif
  Target t = Target::parse("cpu -num-cores=3");
  EXPECT_EQ(t.cpu.cores, 3);
  EXPECT_EQ(t.cpu.isaClass(), host.isaClass());
  std::string text = host.describe();
  EXPECT_NE(text.find("class            " + host.isaClass()), std::string::npos) << text;
}

TEST(Target, TheTableNamesEachArchitecturesBaseline) {
  for (const char* arch : {"x86_64", "aarch64", "arm"}) {
    auto names = target::knownCpuNames(arch);
    EXPECT_NE(std::find(names.begin(), names.end(), target::baselineCpuName(arch)), names.end()) << arch;
  }
  EXPECT_FALSE(target::knownCpu("x86_64", "cortex-a72").has_value());
}

TEST(Target, AModulesRequirementsRoundTripAndNameWhatIsMissing) {
  auto skx = target::CpuRequirements::of(Target::parse("cpu -mcpu=skylake-avx512").cpu);
  EXPECT_EQ(skx.text(), "x86_64-avx512: sse4.2 avx avx2 fma f16c avx512f avx512cd avx512bw avx512dq avx512vl");
  auto parsed = target::CpuRequirements::parse(skx.text(), "m");
  EXPECT_EQ(parsed.isaClass, "x86_64-avx512");
  EXPECT_EQ(parsed.arch, "x86_64");
  EXPECT_EQ(parsed.features, skx.features);
  // An AVX2 CPU (a Zen 3) lacks the AVX-512 features, named in order.
  auto zen3 = Target::parse("cpu -mcpu=znver3").cpu;
  EXPECT_EQ(parsed.missingOn("x86_64", zen3.features),
            (std::vector<std::string>{"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}));
  EXPECT_TRUE(parsed.missingOn("x86_64", Target::parse("cpu -mcpu=sapphirerapids").cpu.features).empty());
  EXPECT_EQ(parsed.missingOn("aarch64", {"neon"}), (std::vector<std::string>{"x86_64"}));
  EXPECT_EQ(target::CpuRequirements::parse("x86_64:", "m").features.size(), 0u);
  EXPECT_NE(errorOf([] { target::CpuRequirements::parse("garbage", "module 'k.so'"); }).find("module 'k.so': the CPU requirements"),
            std::string::npos);
}

TEST(Target, ThePeakRateIsAnUpperBoundFromTheMachineModel) {
  // Haswell: 32-byte vectors (8 fp32 lanes), 2 FMA units; 2 cores at 3 GHz: 2 x 2 x 8 x 2 x 3.
  auto haswell = Target::parse("cpu -mcpu=haswell -num-cores=2").cpu;
  ASSERT_EQ(haswell.fmaUnits, 2);
  EXPECT_DOUBLE_EQ(target::cpuPeakGflops(haswell, 3.0), 192.0);
  // An unknown clock is taken as the ceiling, above any CPU's turbo.
  EXPECT_DOUBLE_EQ(target::cpuPeakGflops(haswell, 0), 192.0 * target::kClockCeilingGhz / 3.0);
  // AVX-512 doubles the lanes; a machine without FMA units counts one (its multiply and add ports).
  auto skx = Target::parse("cpu -mcpu=skylake-avx512 -num-cores=2").cpu;
  EXPECT_DOUBLE_EQ(target::cpuPeakGflops(skx, 3.0), 2.0 * 2 * 16 * 2 * 3);
  auto noFma = haswell;
  noFma.fmaUnits = 0;
  EXPECT_DOUBLE_EQ(target::cpuPeakGflops(noFma, 3.0), 96.0);
  // This machine's: positive, and its clock either read or unknown.
  EXPECT_GT(target::cpuPeakGflops(target::hostCpu(), target::hostMaxClockGhz()), 0);
  EXPECT_GE(target::hostMaxClockGhz(), 0);
}

}  // namespace
}  // namespace tessel
