// CUDA C and OpenCL C generation, and NVRTC: every CUDA kernel here is compiled to a cubin for
// sm_90 (NVRTC needs no GPU). Running the kernels is test_gpu_end_to_end's.
#include <gtest/gtest.h>

#include <filesystem>

#include "codegen/CSource.h"
#include "codegen/GpuBuild.h"
#include "codegen/GpuSource.h"
#include "codegen/Nvrtc.h"
#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "common/ScopedEnv.h"
#include "ops/Examples.h"
#include "ops/GpuDenseTiles.h"
#include "ops/GpuSchedules.h"
#include "ir/Simplify.h"
#include "passes/GpuLaunch.h"
#include "passes/Passes.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::schedule;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;
using tessel::testsupport::ScopedEnv;

namespace {

/// NVRTC is part of the CUDA toolkit, which the project's machines have; elsewhere the CUDA
/// compile tests skip with the reason.
#define REQUIRE_NVRTC()                                             \
  do {                                                              \
    std::string why;                                                \
    if (!codegen::nvrtcAvailable(&why)) GTEST_SKIP() << why;        \
  } while (0)

bool isCubin(const std::string& code) { return code.size() > 4 && code.compare(0, 4, "\x7f" "ELF") == 0; }

}  // namespace

TEST(GpuCodegen, CudaMatmulCompilesToACubinForSm90) {
  REQUIRE_NVRTC();
  for (bool shared : {false, true}) {
    auto binary = kernelcheck::buildForGpu(replay(ops::matmul(128, 96, 64), kernelcheck::gpuschedules::matmul(shared)),
                                           "cuda -arch=sm_90", "matmul");
    EXPECT_TRUE(isCubin(binary.code)) << "shared=" << shared;
    const std::string& cu = binary.source.code;
    expectContains(cu, "extern \"C\" __global__ void __launch_bounds__(128) matmul(");
    expectContains(cu, "blockIdx.y");
    expectContains(cu, "threadIdx.x");
    if (shared) {
      expectContains(cu, "__shared__ __align__(16) float A_shared[512];");
      expectContains(cu, "__syncthreads();");
    }
    auto launch = binary.source.manifest["kernels"][0]["launch"];
    EXPECT_EQ(launch["grid"], nlohmann::json({6, 16, 1}));
    EXPECT_EQ(launch["block"], nlohmann::json({16, 8, 1}));
  }
}

TEST(GpuCodegen, GemmTilesCopyFourElementsPerAccessWideWhereTheAddressesAreAligned) {
  REQUIRE_NVRTC();
  // 16 x 16 blocks of 64 threads and chunks of 16: each operand's window is 256 elements, one
  // float4 per thread; rows of 16 keep every access aligned in both memories.
  auto dag = ops::matmul(64, 64, 64);
  ops::GpuGemmTile tile;
  tile.x = {4, 8, 2};
  tile.y = {4, 8, 2};
  tile.k = 16;
  auto build = [&](const ops::GpuGemmTile& t, const std::string& target) {
    return kernelcheck::buildForGpu(ops::gpuGemmTiles(dag, t).state, target, "mm").source.code;
  };
  // Double-buffered on CUDA (sm_90 copies asynchronously): one 16-byte cp.async a thread and
  // operand; in one buffer, a float4 load and store.
  std::string cu = build(tile, "cuda");
  expectContains(cu, "tessel_cp_async<16>(&A_shared[");
  expectContains(cu, "tessel_cp_async<16>(&B_shared[");
  ops::GpuGemmTile single = tile;
  single.doubleBuffer = false;
  std::string synchronous = build(single, "cuda");
  expectContains(synchronous, "*(float4*)&A_shared[");
  expectContains(synchronous, "= (*(const float4*)&A[");
  expectContains(synchronous, "*(float4*)&B_shared[");
  expectContains(build(tile, "opencl"), "vstore4(vload4(0, &A[");
  ops::GpuGemmTile scalar = tile;
  scalar.copyLanes = 1;
  EXPECT_EQ(build(scalar, "cuda").find("float4"), std::string::npos);
  // On tensor cores the shared rows are padded against bank conflicts: A's to 24 (its fragments
  // are read a float4 a row, so its rows stay aligned and its copy is wide both ways), B's to 34
  // (read a step at a time; its rows are not 16-byte aligned, so no float4 stores, and the
  // double buffers go through registers: element-wise asynchronous copies lose to them).
  ops::GpuGemmTile tc;
  tc.x = {2, 16, 2};
  tc.y = {2, 8, 4};
  tc.k = 16;
  tc.tensorCores = ir::WarpMmaKind::Tf32x3;
  std::string padded = build(tc, "cuda");
  expectContains(padded, "*(float4*)&A_shared[");
  expectContains(padded, "{ const float4 v = (*(const float4*)&B[");
  EXPECT_EQ(padded.find("*(float4*)&B_shared["), std::string::npos);
  expectContains(padded, "tessel_warp_mma<2, 4, 16, true, true>(");
  EXPECT_EQ(padded.find("tessel_cp_async"), std::string::npos);
  // B's rows aligned (padded to 36): both copies asynchronous and whole.
  tc.alignCopyRows = true;
  std::string aligned = build(tc, "cuda");
  expectContains(aligned, "tessel_cp_async<16>(&A_shared[");
  expectContains(aligned, "tessel_cp_async<16>(&B_shared[");
  tile.copyLanes = 3;
  expectContains(errorOf([&] { build(tile, "cuda"); }), "copies of 3 elements per access (copy_lanes is 1, 2 or 4)");
}

TEST(GpuCodegen, AGuardedAsynchronousCopyCopiesNoBytesWhereItsGuardFailsAndCompiles) {
  REQUIRE_NVRTC();
  // 32 threads; thread t copies G[4k + t % 4] into its slot of S where 4k + t % 4 < 10, else a
  // zero, and O[k x 32 + t] = S[slot][t % 4]; chunks k = 0..3, two stages.
  using namespace ir;
  auto g = makeBuffer("G", DataType::float32(), {10}, BufferNode::Scope::Global);
  auto o = makeBuffer("O", DataType::float32(), {128}, BufferNode::Scope::Global);
  auto shared = makeBuffer("S", DataType::float32(), {4}, BufferNode::Scope::Shared);
  Var k("k"), t("t");
  Expr element = k * Expr(int64_t(4)) + floormod(t, Expr(int64_t(4)));
  Stmt copy = makePragma(schedule::kDoubleBufferPragma, "S",
                         makeStore(shared, floormod(t, Expr(int64_t(4))), select(element < Expr(int64_t(10)), load(g, element), Expr(0.0f))));
  Stmt use = makeStore(o, k * Expr(int64_t(32)) + t, load(shared, floormod(t, Expr(int64_t(4)))));
  Stmt loop = makeFor(k, Expr(int64_t(0)), Expr(int64_t(4)), ForKind::Serial, makeAllocate(shared, makeBlock({copy, use})));
  Stmt body = makeFor(t, Expr(int64_t(0)), Expr(int64_t(32)), ForKind::ThreadIdxX,
                      passes::insertSharedMemoryBarriers(ir::simplify(passes::pipelineAsyncCopies(loop, 48 * 1024))));
  passes::GpuLoweredFunction kernel{{"guarded", {g, o}, 1, body}, passes::gpuLaunchOf(body)};
  std::string code = codegen::generateGpuSource({kernel}, codegen::GpuDialect::Cuda).code;
  expectContains(code, "tessel_cp_async<4>(&S[");
  expectContains(code, "? 4 : 0);");
  expectContains(code, "tessel_cp_async_wait<0>();");
  EXPECT_NO_THROW(codegen::buildGpuKernels({kernel}, target::Target::parse("cuda")));
}

TEST(GpuCodegen, CudaConv2dWithVirtualThreadsCompiles) {
  REQUIRE_NVRTC();
  auto binary = kernelcheck::buildForGpu(replay(ops::conv2dNCHW(1, 8, 14, 14, 16, 3, 3, 1, 1), kernelcheck::gpuschedules::conv2d()),
                                         "cuda", "conv");
  EXPECT_TRUE(isCubin(binary.code));
  expectContains(binary.source.code, "// pragma virtual_thread = 2");
}

TEST(GpuCodegen, NvrtcErrorsCarryTheLogAndTheSource) {
  REQUIRE_NVRTC();
  auto cuda = target::Target::parse("cuda");
  std::string message = errorOf([&] { codegen::compileCudaToCubin("extern \"C\" __global__ void k() { undeclared = 1; }", cuda); });
  expectContains(message, "NVRTC could not compile the CUDA kernels for sm_90");
  expectContains(message, "undeclared");
  expectContains(message, "   1 | extern \"C\" __global__ void k()");
  EXPECT_EQ(errorOf([] { codegen::compileCudaToCubin("", target::Target::parse("opencl")); }), "target 'opencl' is not a CUDA target");
  EXPECT_FALSE(codegen::nvrtcVersion().empty());
}

TEST(GpuCodegen, ACudaTargetsOptLevelChoosesNvrtcsFastCompileMode) {
  using Options = std::vector<std::string>;
  EXPECT_EQ(codegen::nvrtcOptionsOf(target::Target::parse("cuda")), (Options{"--gpu-architecture=sm_90", "--std=c++17"}));
  EXPECT_EQ(codegen::nvrtcOptionsOf(target::Target::parse("cuda -arch=sm_80 -opt-level=3")),
            (Options{"--gpu-architecture=sm_80", "--std=c++17"}));
  EXPECT_EQ(codegen::nvrtcOptionsOf(target::Target::parse("cuda -opt-level=1")),
            (Options{"--gpu-architecture=sm_90", "--std=c++17", "--Ofast-compile=min"}));
  EXPECT_EQ(codegen::nvrtcOptionsOf(target::Target::parse("cuda -opt-level=0")),
            (Options{"--gpu-architecture=sm_90", "--std=c++17", "--Ofast-compile=mid"}));
  EXPECT_EQ(errorOf([] { target::Target::parse("cuda -opt-level=4"); }),
            "target 'cuda -opt-level=4': -opt-level must be a number from 0 to 3, got '4'");
  // NVRTC takes the option: the kernel compiles in each mode.
  REQUIRE_NVRTC();
  const char* source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }";
  for (const char* t : {"cuda -opt-level=0", "cuda -opt-level=1", "cuda -opt-level=2"})
    EXPECT_TRUE(isCubin(codegen::compileCudaToCubin(source, target::Target::parse(t)))) << t;
}

TEST(GpuCodegen, CubinsAreCachedByTheirSourceAndOptionsAndACutShortEntryIsCompiledAgain) {
  REQUIRE_NVRTC();
  TempDir cache("tessel-cubin-cache");
  ScopedEnv variable("TESSEL_CUDA_CACHE", cache.path());
  auto entries = [&] {
    std::vector<std::string> files;
    for (auto& e : std::filesystem::directory_iterator(cache.path())) files.push_back(e.path().string());
    return files;
  };
  const std::string source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }";
  auto cuda = target::Target::parse("cuda");
  std::string cubin = codegen::compileCudaToCubin(source, cuda, codegen::CubinCache::kUse);
  ASSERT_TRUE(isCubin(cubin));
  auto files = entries();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(readFile(files[0], file_kinds::kJson), cubin);
  // The entry is what a second compile returns: a whole ELF file put there is taken as it is.
  std::string planted = cubin;
  planted[planted.size() - 1] ^= 0x5a;
  writeFile(files[0], planted, SyncToDisk::kNo);
  EXPECT_EQ(codegen::compileCudaToCubin(source, cuda, codegen::CubinCache::kUse), planted);
  // Without the cache (a tuning candidate) NVRTC compiles, and nothing is stored.
  EXPECT_EQ(codegen::compileCudaToCubin(source, cuda), cubin);
  EXPECT_EQ(entries().size(), 1u);
  // Another option, another source: other entries.
  codegen::compileCudaToCubin(source, target::Target::parse("cuda -opt-level=0"), codegen::CubinCache::kUse);
  codegen::compileCudaToCubin(source + "\n", cuda, codegen::CubinCache::kUse);
  EXPECT_EQ(entries().size(), 3u);
  // An entry cut short (its section headers past its end) is compiled again and replaced.
  writeFile(files[0], cubin.substr(0, cubin.size() / 2), SyncToDisk::kNo);
  EXPECT_EQ(codegen::compileCudaToCubin(source, cuda, codegen::CubinCache::kUse), cubin);
  EXPECT_EQ(readFile(files[0], file_kinds::kJson), cubin);
  // "off" turns the cache off.
  ScopedEnv off("TESSEL_CUDA_CACHE", "off");
  std::filesystem::remove(files[0]);
  EXPECT_EQ(codegen::compileCudaToCubin(source, cuda, codegen::CubinCache::kUse), cubin);
  EXPECT_EQ(entries().size(), 2u);
}

TEST(GpuCodegen, OpenclSourceUsesWorkGroupsAndLocalMemory) {
  auto binary = kernelcheck::buildForGpu(replay(ops::matmul(64, 32, 16), kernelcheck::gpuschedules::matmul(true)),
                                         "opencl -device=mali", "matmul");
  const std::string& cl = binary.code;  // OpenCL keeps the source: the driver builds it
  EXPECT_EQ(cl, binary.source.code);
  expectContains(cl, "__kernel __attribute__((reqd_work_group_size(16, 8, 1))) void matmul(__global const float* restrict A");
  expectContains(cl, "get_group_id(1)");
  expectContains(cl, "get_local_id(0)");
  expectContains(cl, "__local float A_shared[128];");
  expectContains(cl, "barrier(CLK_LOCAL_MEM_FENCE);");
  EXPECT_EQ(binary.source.manifest["device"], "opencl");
}

// GPT-2's causal mask is a bool constant: a bool buffer is one byte per element, read as != 0
// and written as 0 or 1 (OpenCL allows no bool kernel arguments).
TEST(GpuCodegen, BoolBuffersAreBytes) {
  te::Tensor mask = te::placeholder({4, 8}, DataType::boolean(), "mask");
  te::Tensor scores = te::placeholder({4, 8}, DataType::float32(), "scores");
  te::Tensor masked = te::compute(
      {4, 8}, [&](const std::vector<te::Var>& i) { return ir::select(mask(i[0], i[1]), scores(i[0], i[1]), ir::Expr(-1e30f)); },
      "masked");
  te::Tensor kept = te::compute({4, 8}, [&](const std::vector<te::Var>& i) { return scores(i[0], i[1]) > ir::Expr(0.0f); }, "kept");
  te::ComputeDAG dag({masked, kept}, {mask, scores});
  auto steps = ops::defaultGpuSchedule(dag, ops::GpuScheduleOptions{});
  auto opencl = kernelcheck::buildForGpu(replay(dag, steps), "opencl", "masked");
  expectContains(opencl.code, "__global const uchar* restrict mask");
  expectContains(opencl.code, "__global uchar* restrict kept");
  expectContains(opencl.code, "] != 0)");
  expectContains(opencl.code, ") ? 1 : 0)");
  REQUIRE_NVRTC();
  auto cuda = kernelcheck::buildForGpu(replay(dag, steps), "cuda", "masked");
  EXPECT_TRUE(isCubin(cuda.code));
  expectContains(cuda.source.code, "const unsigned char* __restrict__ mask");
}

TEST(GpuCodegen, SavedModuleHoldsManifestAndCode) {
  auto binary = kernelcheck::buildForGpu(replay(ops::matmul(16, 16, 4), kernelcheck::gpuschedules::matmul(false)), "opencl");
  TempDir dir("tessel-gpu-module");
  codegen::saveGpuModule(binary, dir.path() + "/m");
  auto manifest = nlohmann::json::parse(readFile(dir.path() + "/m/manifest.json"));
  EXPECT_EQ(manifest["kernels"][0]["name"], "kernel");
  EXPECT_EQ(readFile(dir.path() + "/m/kernels.cl"), binary.code);
}

TEST(GpuCodegen, CpuBuildsRunBoundLoopsAsPlainLoops) {
  // The same schedule means the same loop nest on the CPU: it compiles and matches the reference.
  auto state = replay(ops::matmul(20, 24, 5), kernelcheck::gpuschedules::matmul(true));
  auto r = kernelcheck::checkAgainstReference(state, 7);
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
  expectContains(r.source, "// bound to threadIdx.x on a GPU");
}

TEST(GpuCodegen, NonGpuTargetsAreRejected) {
  EXPECT_EQ(errorOf([&] { codegen::gpuDialectOfTarget(target::Target::parse("cpu -mcpu=native")); }),
            "target 'cpu -mcpu=native' is not a GPU target (expected 'cuda ...' or 'opencl ...')");
}
