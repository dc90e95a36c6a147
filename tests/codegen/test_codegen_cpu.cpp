// Properties of the generated CPU code that the end-to-end tests do not pin down: buffers in
// parallel loops, whole-vector padding, the kernels' own argument checks, target options.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "common/ErrorText.h"
#include "common/KernelCheck.h"
#include "ops/Examples.h"
#include "ops/Schedules.h"
#include "passes/Lower.h"
#include "schedule/Steps.h"
#include "support/KernelAbi.h"
#include "runtime/Module.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "target/CpuRequirements.h"
#include "target/HostCpu.h"
#include "target/KnownCpus.h"
#include "te/ComputeDAG.h"
#include "te/Tensor.h"

using namespace tessel;
using namespace tessel::schedule;
using tessel::testsupport::errorOf;

namespace {

TEST(CodegenCpu, HeapBufferInsideParallelLoopCompilesAndRuns) {
  // The B panel (2048 x 64 floats = 512 KiB) is too large for the stack, so it is allocated in
  // the parallel loop; its out-of-memory exit must not `return` out of the OpenMP region (that
  // does not compile).
  auto dag = ops::matmul(8, 128, 2048);
  std::vector<StepPtr> steps = {
      std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{64}),
      std::make_shared<ReorderStep>("C", std::vector<std::string>{"j.0", "i", "j.1", "k"}),
      std::make_shared<AnnotateStep>("C", "j.0", Annotation::Parallel),
      std::make_shared<CacheReadStep>("B", "panel", std::vector<std::string>{"C"}),
      std::make_shared<ComputeAtStep>("B.panel", "C", "j.0"),
  };
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), 11);
  EXPECT_LT(r.maxRelativeError, 1e-5);
  EXPECT_NE(r.source.find("aligned_alloc(64, 524288)"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("out of memory for a buffer in a parallel loop"), std::string::npos);
}

TEST(CodegenCpu, AWholeCallBufferIsAWorkspaceKeptBetweenCalls) {
  // The padded input of a 64x64x64 NHWC conv (66*66*64 floats, over 1 MiB) is computed once per
  // call, outside any parallel loop: the library's workspace, not an allocation per call. Two
  // output channels: the padded input is the same for any number (each is 2.4 million
  // multiply-adds of the reference evaluator, slow under the sanitizers).
  auto dag = ops::conv2dNHWC(1, 64, 64, 64, 2, 3, 3, 1, 1);
  auto state = replay(dag, {std::make_shared<AnnotateStep>("conv2d_nhwc", "yy", Annotation::Parallel)});
  std::string source = codegen::generateCSource({passes::lower(state, "conv")});
  EXPECT_NE(source.find("static void* tessel_workspace_conv_0 = 0;"), std::string::npos) << source;
  EXPECT_NE(source.find("tessel_free_workspaces"), std::string::npos) << source;
  // Right on the first call, called again, and from two threads at once (one of them allocates
  // its own).
  TempDir dir;
  codegen::compileSharedLibrary(source, dir.path() + "/conv.so");
  auto module = runtime::Module::load(dir.path() + "/conv.so");
  auto data = kernelcheck::makeReferenceData(dag, 13);
  auto kernel = module.kernel("conv");
  for (int i = 0; i < 2; ++i) EXPECT_LT(kernelcheck::runAndCompare(kernel, data), 1e-5);
  double errors[2] = {1, 1};
  std::thread other([&] { errors[1] = kernelcheck::runAndCompare(kernel, data); });
  errors[0] = kernelcheck::runAndCompare(kernel, data);
  other.join();
  EXPECT_LT(errors[0], 1e-5);
  EXPECT_LT(errors[1], 1e-5);
}

TEST(CodegenCpu, SmallBufferInsideParallelLoopStaysOnTheStack) {
  auto dag = ops::matmul(8, 128, 64);
  std::vector<StepPtr> steps = {
      std::make_shared<SplitStep>("C", "j", std::vector<int64_t>{64}),
      std::make_shared<AnnotateStep>("C", "j.0", Annotation::Parallel),
      std::make_shared<CacheReadStep>("B", "panel", std::vector<std::string>{"C"}),
      std::make_shared<ComputeAtStep>("B.panel", "C", "j.0"),
  };
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), 12);
  EXPECT_LT(r.maxRelativeError, 1e-5);
  EXPECT_NE(r.source.find("alignas(64) float B_panel[4096]"), std::string::npos) << r.source;
  EXPECT_EQ(r.source.find("= (float*)aligned_alloc"), std::string::npos);
}

TEST(CodegenCpu, PaddingWithLaneInvariantConditionIsWholeVectorCode) {
  // NHWC padding vectorized over channels: the border test does not depend on the channel, so
  // the copy is one vector select, not 16 scalar lanes.
  auto dag = ops::conv2dNHWC(1, 16, 6, 5, 8, 3, 3, 2, 1);
  std::vector<StepPtr> steps = {
      std::make_shared<AnnotateStep>("PaddedInput", "i3", Annotation::Vectorize),
  };
  auto r = kernelcheck::checkAgainstReference(replay(dag, steps), 13);
  EXPECT_LT(r.maxRelativeError, 1e-5);
  EXPECT_EQ(r.source.find("_t0[0]"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("? (*(tessel_floatx16_u*)(data + "), std::string::npos) << r.source;
}

/// Calls a compiled kernel through its bare C symbol, bypassing the runtime's own checks.
class RawKernel {
 public:
  explicit RawKernel(const te::ComputeDAG& dag) {
    std::string source = codegen::generateCSource({passes::lower(replay(dag, {}), "k")});
    codegen::compileSharedLibrary(source, dir_.path() + "/k.so");
    handle_ = dlopen((dir_.path() + "/k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle_, nullptr);
    fn_ = reinterpret_cast<Fn>(dlsym(handle_, "k"));
  }
  ~RawKernel() {
    if (handle_) dlclose(handle_);
  }
  std::string call(std::vector<TesselTensor> args, int capacity = 256) {
    std::string error(size_t(capacity), '\0');
    int32_t rc = fn_(args.data(), int32_t(args.size()), error.data(), capacity);
    if (rc == 0) return "ok";
    return error.c_str();
  }

 private:
  using Fn = int32_t (*)(const TesselTensor*, int32_t, char*, int32_t);
  TempDir dir_{"tessel-test"};
  void* handle_ = nullptr;
  Fn fn_ = nullptr;
};

TesselTensor cpuFloatTensor(float* data, const int64_t* shape, int32_t ndim, const int64_t* strides = nullptr) {
  TesselTensor t{};
  t.data = data;
  t.shape = shape;
  t.strides = strides;
  t.ndim = ndim;
  t.dtype_code = 2;
  t.dtype_bits = 32;
  t.dtype_lanes = 1;
  t.device_type = TESSEL_DEVICE_CPU;
  return t;
}

TEST(CodegenCpu, KernelChecksItsOwnArguments) {
  RawKernel kernel(ops::matmul(2, 3, 4));
  std::vector<float> a(8), b(12), c(6);
  const int64_t sa[] = {2, 4}, sb[] = {4, 3}, sc[] = {2, 3}, wrong[] = {4, 5}, rowStrides[] = {4, 1}, badStrides[] = {1, 2};
  auto A = cpuFloatTensor(a.data(), sa, 2), B = cpuFloatTensor(b.data(), sb, 2), C = cpuFloatTensor(c.data(), sc, 2);
  EXPECT_EQ(kernel.call({A, B, C}), "ok");
  EXPECT_EQ(kernel.call({A, B}), "kernel 'k': expected 3 arguments, got 2");
  EXPECT_EQ(kernel.call({A, cpuFloatTensor(b.data(), wrong, 2), C}), "kernel 'k', argument 'B' (2 of 3): dimension 1 must be 3");
  EXPECT_EQ(kernel.call({cpuFloatTensor(a.data(), sa, 2, rowStrides), B, C}), "ok");
  EXPECT_EQ(kernel.call({cpuFloatTensor(a.data(), sa, 2, badStrides), B, C}),
            "kernel 'k', argument 'A' (1 of 3): must be compact row-major");
  auto intC = C;
  intC.dtype_code = 0;
  EXPECT_EQ(kernel.call({A, B, intC}),
            "kernel 'k', argument 'C' (3 of 3): wrong data pointer, rank, dtype or device (expected float32 [2, 3] on cpu)");
  auto nullA = A;
  nullA.data = nullptr;
  EXPECT_EQ(kernel.call({nullA, B, C}),
            "kernel 'k', argument 'A' (1 of 3): wrong data pointer, rank, dtype or device (expected float32 [2, 4] on cpu)");
  // A short error buffer is truncated and terminated, never overrun.
  EXPECT_EQ(kernel.call({A, B}, 10), "kernel 'k");
}

codegen::CompileOptions optionsOf(const char* target) { return codegen::compileOptionsForTarget(target::Target::parse(target)); }

TEST(CodegenCpu, TargetOptions) {
  auto o = optionsOf("cpu -opt-level=3 -mcpu=skylake -mattr=+avx2,-avx512f");
  EXPECT_EQ(o.flags, (std::vector<std::string>{"-O3", "-march=skylake", "-mavx2", "-mno-avx512f"}));
  EXPECT_EQ(o.moduleRequires, "x86_64-avx2: sse4.2 avx avx2 fma f16c");
  EXPECT_EQ(optionsOf("cpu").flags, (std::vector<std::string>{"-O2", "-march=native"}));
  EXPECT_EQ(optionsOf("cpu").moduleRequires, target::CpuRequirements::of(target::hostCpu()).text());
  // -num-cores and the machine's facts shape schedules, not compiler flags.
  EXPECT_EQ(optionsOf("cpu -num-cores=16 -l2=2M -vector-bytes=32").flags, (std::vector<std::string>{"-O2", "-march=native"}));
  // ARM compilers take a core's name as -mcpu and an architecture's as -march.
  EXPECT_EQ(optionsOf("cpu -mtriple=aarch64-linux-gnu -mcpu=cortex-a72").flags[1], "-mcpu=cortex-a72");
  EXPECT_EQ(optionsOf("cpu -mtriple=aarch64-linux-gnu -mcpu=armv8.2-a").flags[1], "-march=armv8.2-a");
  EXPECT_EQ(optionsOf("cpu -mtriple=aarch64-linux-gnu").compiler, "aarch64-linux-gnu-gcc");
  EXPECT_EQ(optionsOf("cpu -mtriple=aarch64-linux-gnu").moduleRequires, "aarch64: neon");
  EXPECT_EQ(optionsOf("cpu -cc=clang++").compiler, "clang++");
}

// The table of -mcpu names says what GCC says: for every x86 name the installed compiler
// accepts, the features it predefines with -march=NAME are exactly the table's (so the class
// keying shipped records, the vector width and what a module requires follow the compiler);
// the same for the AArch64 names with the cross compiler when it is installed.
// A module records what its kernels need of the CPU; compiled for a CPU this machine is not,
// it refuses to load with a message naming both, before any of its code runs (not SIGILL).
TEST(CodegenCpu, AModuleForFeaturesThisCpuLacksRefusesToLoad) {
  const auto& host = target::hostCpu();
  std::string foreign;
  for (const char* name : {"skylake-avx512", "sapphirerapids"}) {
    auto machine = target::knownCpu("x86_64", name);
    if (host.arch == "x86_64" && !target::CpuRequirements::of(*machine).missingOn(host.arch, host.features).empty()) {
      foreign = name;
      break;
    }
  }
  auto state = replay(ops::matmul(8, 8, 8), {});
  TempDir dir;
  // For this machine: the module loads, and its requirements are this CPU's.
  codegen::compileSharedLibrary(codegen::generateCSource({passes::lower(state, "k")}), dir.path() + "/native.so", optionsOf("cpu"));
  auto native = runtime::Module::load(dir.path() + "/native.so");
  void* handle = dlopen((dir.path() + "/native.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr);
  auto* recorded = static_cast<const char*>(dlsym(handle, TESSEL_MODULE_REQUIRES_SYMBOL));
  ASSERT_NE(recorded, nullptr);
  EXPECT_EQ(std::string(recorded), target::CpuRequirements::of(host).text());
  dlclose(handle);
  // Without a target, nothing is recorded and nothing is checked.
  codegen::compileSharedLibrary(codegen::generateCSource({passes::lower(state, "k")}), dir.path() + "/plain.so");
  runtime::Module::load(dir.path() + "/plain.so");
  if (foreign.empty()) GTEST_SKIP() << "this CPU has every feature of the x86 CPUs tessel knows: nothing to refuse";
  std::string path = dir.path() + "/foreign.so";
  codegen::compileSharedLibrary(codegen::generateCSource({passes::lower(state, "k")}), path, optionsOf(("cpu -mcpu=" + foreign).c_str()));
  std::string error = errorOf([&] { runtime::Module::load(path); });
  EXPECT_NE(error.find("cannot load module '" + path + "': it was compiled for x86_64-avx512"), std::string::npos) << error;
  EXPECT_NE(error.find("this CPU (" + host.name + ", " + host.isaClass() + ") lacks "), std::string::npos) << error;
}

TEST(CodegenCpu, TheTableOfCpusAgreesWithTheCompilersPredefinedMacros) {
  const std::map<std::string, std::string> macros = {
      {"sse4.2", "__SSE4_2__"},         {"avx", "__AVX__"},           {"avx2", "__AVX2__"},
      {"fma", "__FMA__"},               {"f16c", "__F16C__"},         {"avxvnni", "__AVXVNNI__"},
      {"avx512f", "__AVX512F__"},       {"avx512cd", "__AVX512CD__"}, {"avx512bw", "__AVX512BW__"},
      {"avx512dq", "__AVX512DQ__"},     {"avx512vl", "__AVX512VL__"}, {"avx512vnni", "__AVX512VNNI__"},
      {"avx512bf16", "__AVX512BF16__"}, {"avx512fp16", "__AVX512FP16__"}, {"amx-tile", "__AMX_TILE__"},
      {"amx-int8", "__AMX_INT8__"},     {"amx-bf16", "__AMX_BF16__"}, {"neon", "__ARM_NEON"},
      {"dotprod", "__ARM_FEATURE_DOTPROD"}, {"fp16", "__ARM_FEATURE_FP16_VECTOR_ARITHMETIC"},
      {"bf16", "__ARM_FEATURE_BF16_VECTOR_ARITHMETIC"}, {"i8mm", "__ARM_FEATURE_MATMUL_INT8"}, {"sve", "__ARM_FEATURE_SVE"}};
  for (const std::string arch : {"x86_64", "aarch64"}) {
    std::string triple = arch == "x86_64" ? "" : " -mtriple=aarch64-linux-gnu";
    int checked = 0, refused = 0;
    for (const auto& name : target::knownCpuNames(arch)) {
      auto t = target::Target::parse("cpu -mcpu=" + name + triple);
      auto o = codegen::compileOptionsForTarget(t);
      std::vector<std::string> argv = {o.compiler};
      argv.insert(argv.end(), o.flags.begin(), o.flags.end());
      argv.insert(argv.end(), {"-dM", "-E", "-x", "c", "/dev/null"});
      SubprocessResult r;
      try {
        r = runSubprocess(argv);
      } catch (const Error&) {
        break;  // no such compiler (the cross compiler is optional)
      }
      if (!r.ok()) {  // a name newer than this compiler
        ++refused;
        continue;
      }
      ++checked;
      for (const auto& feature : target::trackedCpuFeatures(arch)) {
        bool compiler = r.output.find("#define " + macros.at(feature) + " ") != std::string::npos;
        EXPECT_EQ(t.cpu.has(feature), compiler) << name << ": " << feature << (compiler ? " is predefined" : " is not predefined");
      }
    }
    if (arch == "x86_64") {
      EXPECT_GE(checked, 40) << refused << " names refused";
    }
  }
}
}  // namespace


namespace tessel {
namespace {

/// The float vector math (codegen/VectorMath.h) against libm in double: exp, erf, tanh and
/// sigmoid of 16-lane vectors over a sweep of the float range and its special values.
TEST(CodegenCpu, VectorMathFollowsLibmOverTheFloatRange) {
  std::vector<float> x = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, 0.5f, 0.625f, 1.0f, -1.0f, 3.9f, 4.0f, 4.5f, -87.0f, -87.5f,
                          -103.0f, 88.0f, 88.7f, 89.0f, 1e30f, -1e30f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  for (int i = -4000; i <= 4000; ++i) x.push_back(float(i) * 0.025f);  // [-100, 100]
  for (int i = 1; i <= 80; ++i) x.push_back(std::ldexp(1.3f, -i));       // small magnitudes
  while (x.size() % 16) x.push_back(0.25f);
  const int64_t n = int64_t(x.size());
  te::Tensor in = te::placeholder({n}, DataType::float32(), "x");
  std::vector<ir::Intrinsic> functions = {ir::Intrinsic::Exp, ir::Intrinsic::Erf, ir::Intrinsic::Tanh, ir::Intrinsic::Sigmoid};
  std::vector<te::Tensor> outs;
  std::vector<StepPtr> steps;
  for (size_t f = 0; f < functions.size(); ++f) {
    std::string name = fmt::format("y{}", f);
    outs.push_back(te::compute({n}, [&](const std::vector<te::Var>& i) { return ir::call(functions[f], {in(i[0])}); }, name));
    steps.push_back(std::make_shared<SplitStep>(name, "i0", std::vector<int64_t>{16}));
    steps.push_back(std::make_shared<AnnotateStep>(name, "i0.1", Annotation::Vectorize));
  }
  te::ComputeDAG dag(outs, {in});
  std::string source = codegen::generateCSource({passes::lower(replay(dag, steps), "math")});
  for (const char* f : {"tessel_vexp<", "tessel_verf<", "tessel_vtanh<", "tessel_vsigmoid<"})
    EXPECT_NE(source.find(std::string(f) + "tessel_floatx16, tessel_int32x16>("), std::string::npos) << f;
  TempDir dir;
  codegen::compileSharedLibrary(source, dir.path() + "/math.so");
  auto module = runtime::Module::load(dir.path() + "/math.so");
  std::vector<runtime::Tensor> args{runtime::Tensor::empty({n}, DataType::float32())};
  std::copy(x.begin(), x.end(), args[0].dataAs<float>());
  for (size_t f = 0; f < functions.size(); ++f) args.push_back(runtime::Tensor::empty({n}, DataType::float32()));
  module.kernel("math").call(args);
  auto reference = [](size_t f, double v) {
    switch (f) {
      case 0: return std::exp(v);
      case 1: return std::erf(v);
      case 2: return std::tanh(v);
      default: return 1.0 / (1.0 + std::exp(-v));
    }
  };
  for (size_t f = 0; f < functions.size(); ++f) {
    const float* y = args[f + 1].dataAs<float>();
    for (int64_t i = 0; i < n; ++i) {
      double want = reference(f, double(x[size_t(i)])), got = y[i];
      SCOPED_TRACE(fmt::format("function {} of {:.9g}: {:.9g}, libm {:.9g}", f, x[size_t(i)], got, want));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got));
      } else if (std::isinf(want) || std::abs(want) > 3.4e38) {
        EXPECT_TRUE(std::isinf(got) && (got > 0) == (want > 0));
      } else {
        // A few float ulps of the value (exp's 2 ulp, erf's fit); results below the smallest
        // normal float may be flushed to 0.
        EXPECT_LE(std::abs(got - want), 5e-7 * std::abs(want) + 1.2e-38);
      }
    }
  }
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

/// A row reduction the schedule leaves scalar (197 is no multiple of the lanes) runs as an
/// OpenMP simd reduction: max and sum of a softmax over ViT's 197 tokens, against the reference.
TEST(CodegenCpu, ScalarRowReductionsAreSimdReductions) {
  auto dag = ops::softmax(6, 197);
  auto state = replay(dag, ops::defaultCpuSchedule(dag));
  auto r = kernelcheck::checkAgainstReference(state, 17);
  EXPECT_LT(r.maxRelativeError, 1e-5);
  EXPECT_NE(r.source.find("#pragma omp simd reduction(max:T_softmax_maxelem_r0)"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("#pragma omp simd reduction(+:T_softmax_expsum_r0)"), std::string::npos) << r.source;
}

}  // namespace
}  // namespace tessel
