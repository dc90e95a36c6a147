// The commands on GPU modules: compile --target opencl|cuda, run and benchmark --device,
// query --device --hardware, and the errors of a module run on the wrong kind of device.
// OpenCL runs on the first OpenCL device (PoCL here).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <tuple>
#include <vector>

#include "common/GpuRequire.h"
#include "common/TesselCli.h"
#include "graph/Build.h"
#include "graph/CliTestGraph.h"
#include "runtime/CudaDevice.h"
#include "runtime/Npy.h"
#include "runtime/OpenclDevice.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "target/HostCpu.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::graph;

namespace {

void expectOutput(const SubprocessResult& r, const std::string& part, int exitCode = 0) {
  EXPECT_EQ(r.exitCode, exitCode) << r.output;
  EXPECT_NE(r.output.find(part), std::string::npos) << r.output;
}

/// How many kernels of a CUDA module's source call the warp's tensor-core product in 3xTF32
/// (fp32-accurate) and in one TF32 product.
std::pair<int, int> tensorCoreCalls(const std::string& module) {
  std::string code = readFile(module + "/kernels.cu");
  auto count = [&](const std::regex& re) { return int(std::distance(std::sregex_iterator(code.begin(), code.end(), re), std::sregex_iterator())); };
  // Either helper (contiguous sub-tiles or interleaved lanes); the fourth argument says three products.
  return {count(std::regex(R"(tessel_warp_mma(_interleaved)?<\d+, \d+, \d+, true, (true|false)(, true|, false)?>\()")),
          count(std::regex(R"(tessel_warp_mma(_interleaved)?<\d+, \d+, \d+, false, (true|false)(, true|, false)?>\()"))};
}

double largestRelativeDifference(const runtime::Tensor& a, const runtime::Tensor& b) {
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < b.numel(); ++i) scale = std::max(scale, double(std::fabs(b.dataAs<float>()[i])));
  for (int64_t i = 0; i < b.numel(); ++i) worst = std::max(worst, std::fabs(double(a.dataAs<float>()[i]) - b.dataAs<float>()[i]) / scale);
  return worst;
}

}  // namespace

TEST(GpuCli, RunAndBenchmarkAnOpenclModule) {
  TESSEL_REQUIRE_OPENCL();
  Graph g = graph::testsupport::diagonalMatmulGraph();
  TempDir dir;
  BuildOptions options;
  options.target = target::Target::parse("opencl");
  buildGraph(g, dir.path() + "/m", options);
  auto ones = runtime::Tensor::empty({1, 8}, DataType::float32());
  for (int i = 0; i < 8; ++i) ones.dataAs<float>()[i] = 1.0f;
  runtime::saveNpy(ones, dir.path() + "/ones.npy");
  std::string m = dir.path() + "/m";

  expectOutput(runSubprocess({tesselCli(), "run", m, "--device", "opencl", "--input", dir.path() + "/ones.npy"}),
               "output shape [1, 8]; top-5:\n  class     7  score 63\n  class     6  score 54\n");
  auto bench = runSubprocess({tesselCli(), "benchmark", m, "--device", "opencl:0", "--repeat", "3", "--min-repeat-ms", "5"});
  expectOutput(bench, "Mean inference time (std dev): ");
  expectOutput(bench, "device opencl:0 (");
  expectOutput(runSubprocess({tesselCli(), "run", m}), "error: " + m + ": the module was built for opencl devices, not cpu:0", 1);
  expectOutput(runSubprocess({tesselCli(), "run", m, "--device", "opencl", "--no-cuda-graph"}),
               "error: --no-cuda-graph applies to --device cuda", 1);
  expectOutput(runSubprocess({tesselCli(), "run", m, "--device", "gpu"}), "error: ", 1);
}

TEST(GpuCli, TasksOfAGpuTargetAreTheTasksItsTuningTunes) {
  // NCHW convolutions with their epilogues, numbered as `tune --target` tunes them: each
  // function with its specific template, then with gpu_default; a Winograd candidate also as
  // Winograd, right after its direct tasks.
  auto tasks = runSubprocess({tesselCli(), "tasks", "--model", "resnet-18", "--image-size", "32", "--target", "cuda"});
  expectOutput(tasks, "Extract tasks...\nExtracted ");
  auto expectTasks = [](const SubprocessResult& r, const std::string& pattern) {
    EXPECT_TRUE(std::regex_search(r.output, std::regex(pattern))) << pattern << " not in:\n" << r.output;
  };
  expectTasks(tasks, "\n   1  conv1_relu +conv2d_nchw\\.cuda +[0-9.]+ MFLOP +[0-9]+ configs.*\n   2  conv1_relu +gpu_default ");
  expectTasks(tasks, "conv2d_nchw\\.cuda .*\n.* gpu_default .*\n.* conv2d_nchw_winograd\\.cuda ");
  expectTasks(tasks, " dense_small_batch\\.cuda .*\n.* gpu_default ");
  auto nhwc = runSubprocess(
      {tesselCli(), "tasks", "--model", "resnet-18", "--image-size", "32", "--target", "cuda", "--desired-layout", "NHWC"});
  expectTasks(nhwc, "\n   1  conv1_relu +conv2d_nhwc\\.cuda ");
  auto mobilenet = runSubprocess({tesselCli(), "tasks", "--model", "mobilenet", "--image-size", "32", "--target", "opencl"});
  expectTasks(mobilenet, " depthwise_conv2d_nchw\\.cuda .*\n.* gpu_default ");
  expectOutput(runSubprocess({tesselCli(), "tasks", "--model", "resnet-18", "--target", "opencl", "--target-host", "mali"}),
               "--target-host 'mali' with --target 'opencl': not a CPU target", 1);
  expectOutput(runSubprocess({tesselCli(), "tasks", "--model", "resnet-18", "--target", "mali"}),
               "error: target 'mali': unknown kind 'mali' (known: cpu, cuda, opencl, vta; llvm and c mean cpu)",
               1);
}

TEST(GpuCli, CompileForOpenclAndCuda) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir;
  auto compiled = runSubprocess({tesselCli(), "compile", "--model", "mobilenet-v2", "--target", "opencl", "-o", dir.path() + "/cl"});
  expectOutput(compiled, "compiled mobilenet-v2 for opencl into " + dir.path() + "/cl: ");
  expectOutput(compiled, "limits of opencl:0 (");
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/cl/kernels.cl"));
  // GPU targets keep the network in NCHW (the default layout there): no image transposed.
  std::string plan = readFile(dir.path() + "/cl/graph.json", file_kinds::kGraphPlan);
  EXPECT_EQ(plan.find("transpose"), std::string::npos);
  expectOutput(runSubprocess({tesselCli(), "run", dir.path() + "/cl", "--device", "opencl"}), "output shape [1, 1000]; top-5:");
  // CUDA: NVRTC builds the cubin here; the build names the profile when no GPU is present.
  // NVRTC's fast-compile mode (-opt-level=0): what is checked is the build, not the kernels' speed.
  auto cuda =
      runSubprocess({tesselCli(), "compile", "--model", "squeezenet_v1.1", "--target", "cuda -opt-level=0", "-o", dir.path() + "/cu"});
  expectOutput(cuda, "compiled squeezenet_v1.1 for cuda -opt-level=0 into ");
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/cu/kernels.cubin"));
  expectOutput(runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", "cuda", "--naive", "-o", dir.path() + "/n"}),
               "error: --naive: a GPU kernel needs its loops bound to blocks and threads", 1);
  // Channel tiles: the rule's (auto) or one asked for; a CPU build has none.
  auto tiled = runSubprocess({tesselCli(), "compile", "--model", "squeezenet_v1.1", "--target", "opencl", "--channel-tile", "4", "-o",
                              dir.path() + "/t"});
  expectOutput(tiled, "compiled squeezenet_v1.1 for opencl");
  expectOutput(runSubprocess({tesselCli(), "run", dir.path() + "/t", "--device", "opencl"}), "output shape [1, 1000]; top-5:");
  expectOutput(runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", "cuda", "--channel-tile", "3", "-o",
                              dir.path() + "/x"}),
               "error: --channel-tile: '3' is not auto, 1, 2 or 4", 1);
  expectOutput(runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--channel-tile", "2", "-o", dir.path() + "/y"}),
               "error: --channel-tile applies to GPU targets (cuda, opencl)", 1);
  // Reductions split across threads: asked for everywhere the axis divides, or never.
  auto split = runSubprocess({tesselCli(), "compile", "--model", "squeezenet_v1.1", "--target", "opencl", "--reduction-parts", "4",
                              "-o", dir.path() + "/s"});
  expectOutput(split, "compiled squeezenet_v1.1 for opencl");
  EXPECT_NE(readFile(dir.path() + "/s/kernels.cl").find("barrier(CLK_LOCAL_MEM_FENCE);"), std::string::npos);
  expectOutput(runSubprocess({tesselCli(), "run", dir.path() + "/s", "--device", "opencl"}), "output shape [1, 1000]; top-5:");
  expectOutput(runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", "cuda", "--reduction-parts", "3", "-o",
                              dir.path() + "/x"}),
               "error: --reduction-parts: '3' is not auto, 1, 2, 4, 8 or 16", 1);
  expectOutput(runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--reduction-parts", "2", "-o", dir.path() + "/y"}),
               "error: --reduction-parts applies to GPU targets (cuda, opencl)", 1);
}

TEST(GpuCli, CudaBuildsTakeTheRecordsShippedForTheirArchitecture) {
  // records/cuda/sm_90.log's CNNs were tuned on an H100: every kernel of the networks it was tuned for
  // finds its record and replays (a change of the operators or passes that leaves them behind
  // fails here); --no-shipped-records and an explicit default-schedule rule build the defaults.
  // NVRTC in its fast-compile mode (-opt-level=0): the records are what is checked.
  TempDir dir;
  const std::string cuda = "cuda -opt-level=0";
  // Compiles `model` for `target`; returns how many of its kernels took a shipped record, and of how many.
  auto shippedUse = [&](const std::string& model, const std::string& target, std::vector<std::string> flags, const std::string& out) {
    std::vector<std::string> args = {tesselCli(), "compile", "--model", model, "--target", target, "-o", dir.path() + "/" + out};
    args.insert(args.end(), flags.begin(), flags.end());
    auto r = runSubprocess(args);
    const std::string usedLine = "using shipped records for " + target + " (cuda/sm_90): ";
    expectOutput(r, usedLine);
    std::string counts = r.output.substr(std::min(r.output.size(), r.output.find(usedLine) + usedLine.size()));
    int used = 0, all = 0;
    EXPECT_EQ(std::sscanf(counts.c_str(), "%d of %d kernels", &used, &all), 2) << counts;
    EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
    return std::pair{used, all};
  };
  // Every kernel but the flatten (a copy no tuning task covers) takes a shipped record.
  for (const std::string model : {"resnet-18", "resnet-50", "mobilenet-v2"}) {
    auto [used, all] = shippedUse(model, cuda, {}, model);
    EXPECT_EQ(used, all - 1) << model;
  }
  // The transformers' records were tuned on an H200 (one layer here: the same workloads as
  // twelve), with the heads' split and merge in the products' operand copies: every product
  // takes one, and ViT's patch sum, tokens, layer norm and softmax. BERT's and GPT-2's
  // element-wise and row kernels (embedding, layer norm, softmax, the split products' sums) ship
  // none: theirs measured slower in the network (BERT-base in TF32 on the H200: 1.02 ms with
  // them, 0.947 with the products' records alone, 0.95 untuned).
  for (const auto& [model, shipped] : std::vector<std::pair<std::string, int>>{{"bert-base", 6}, {"gpt2", 6}, {"vit-b16", 12}}) {
    auto [used, all] = shippedUse(model, cuda, {"--layers", "1"}, model);
    EXPECT_EQ(used, shipped) << model << " of " << all;
  }
  // With TF32 allowed the products take the records tuned for TF32 or, where one measured
  // faster, the fp32 target's (fp32-accurate 3xTF32 allowed where TF32 is: a target string other
  // than the one tuned for ranks the two by cost), the other kernels as above: all but BERT's
  // row and element-wise kernels and ViT's bias sum.
  for (const auto& [model, unrecorded] : std::vector<std::pair<std::string, int>>{{"bert-base", 5}, {"vit-b16", 1}}) {
    auto [used, all] = shippedUse(model, cuda + " -matmul-precision=tf32", {"--layers", "1"}, model + ".tf32");
    EXPECT_EQ(used, all - unrecorded) << model;
    EXPECT_GT(tensorCoreCalls(dir.path() + "/" + model + ".tf32").second, 0) << model;
  }
  auto none = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", cuda, "--no-shipped-records", "-o", dir.path() + "/none"});
  EXPECT_EQ(none.output.find("shipped"), std::string::npos) << none.output;
  auto rule = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", cuda, "--channel-tile", "2", "-o", dir.path() + "/rule"});
  EXPECT_EQ(rule.exitCode, 0) << rule.output;
  EXPECT_EQ(rule.output.find("shipped"), std::string::npos) << rule.output;
  // OpenCL devices have nothing in common to ship for: no records, no message.
  auto cl = runSubprocess({tesselCli(), "compile", "--model", "resnet-18", "--target", "opencl", "-o", dir.path() + "/cl"});
  EXPECT_EQ(cl.output.find("shipped"), std::string::npos) << cl.output;
}


// -matmul-precision=tf32 (PyTorch's allow_tf32): the products on tensor cores take one TF32
// product instead of three; the default keeps them fp32-accurate. With a GPU: both builds of
// one BERT layer run on the same token ids, the TF32 one within TF32's error of the other.
TEST(GpuCli, ATf32TargetComputesItsProductsInTf32) {
  TempDir dir;
  auto build = [&](const std::string& target, const std::string& name) {
    expectOutput(runSubprocess({tesselCli(), "compile", "--model", "bert-base", "--layers", "1", "--target", target,
                                "--no-shipped-records", "-o", dir.path() + "/" + name}),
                 "compiled bert-base for " + target);
    return dir.path() + "/" + name;
  };
  std::string fp32 = build("cuda -opt-level=0", "fp32"), tf32 = build("cuda -opt-level=0 -matmul-precision=tf32", "tf32");
  auto [fp32Split, fp32One] = tensorCoreCalls(fp32);
  auto [tf32Split, tf32One] = tensorCoreCalls(tf32);
  EXPECT_GT(fp32Split, 0);  // the projections and the feed-forward's products
  EXPECT_EQ(fp32One, 0);
  EXPECT_EQ(tf32Split, 0);
  EXPECT_GE(tf32One, fp32Split);
  std::string why;
  if (!runtime::cudaDeviceAvailable(&why)) {
    if (tessel::testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
    GTEST_SKIP() << "compiled, not run: " << why;
  }
  auto ids = runtime::Tensor::empty({1, 128}, DataType::int64());
  for (int64_t i = 0; i < ids.numel(); ++i) ids.dataAs<int64_t>()[i] = (i * 7919 + 3) % 30522;  // BERT's vocabulary
  runtime::saveNpy(ids, dir.path() + "/ids.npy");
  for (const std::string& m : {fp32, tf32})
    expectOutput(runSubprocess({tesselCli(), "run", m, "--device", "cuda", "--input", dir.path() + "/ids.npy", "--output", m + ".npy"}),
                 "output 0: float32 [1, 128, 768] saved to");
  double difference = largestRelativeDifference(runtime::loadNpy(tf32 + ".npy"), runtime::loadNpy(fp32 + ".npy"));
  EXPECT_GT(difference, 1e-6);  // the operands were rounded
  EXPECT_LT(difference, 1e-2);
}

namespace {

/// A one-layer transformer of the zoo (16 tokens) compiled for OpenCL with `flag` set to `mode`
/// and run on token ids: the build's fused function count, its directory, its output.
struct OneLayerRun {
  int functions = 0;
  std::string directory;
  runtime::Tensor output;
};

OneLayerRun compileAndRunOneLayer(const TempDir& dir, const std::string& model, int64_t vocabulary, const std::string& flag,
                                  const std::string& mode) {
  std::string ids = dir.path() + "/ids.npy";
  if (!std::filesystem::exists(ids)) {
    auto tokens = runtime::Tensor::empty({1, 16}, DataType::int64());
    for (int64_t i = 0; i < tokens.numel(); ++i) tokens.dataAs<int64_t>()[i] = (i * 7919 + 3) % vocabulary;
    runtime::saveNpy(tokens, ids);
  }
  OneLayerRun run;
  run.directory = dir.path() + "/" + mode;
  auto r = runSubprocess({tesselCli(), "compile", "--model", model, "--layers", "1", "--sequence", "16", "--target", "opencl", flag, mode,
                          "-o", run.directory});
  expectOutput(r, "compiled " + model + " for opencl");
  std::smatch m;
  if (std::regex_search(r.output, m, std::regex("(\\d+) fused functions"))) run.functions = std::stoi(m[1]);
  expectOutput(runSubprocess({tesselCli(), "run", run.directory, "--device", "opencl", "--input", ids, "--output", run.directory + ".npy"}),
               "output 0: float32 [1, 16, 768] saved to");
  run.output = runtime::loadNpy(run.directory + ".npy");
  return run;
}

/// The plan's calls of kernels made of layout ops alone (named after their first op).
std::vector<std::string> layoutKernelsOf(const std::string& directory) {
  std::string plan = readFile(directory + "/graph.json", file_kinds::kGraphPlan);
  std::vector<std::string> kernels;
  std::regex layoutKernel("\"kernel\": *\"(fused_(transpose|reshape|strided_slice|flatten)_\\d+)\"");
  for (auto it = std::sregex_iterator(plan.begin(), plan.end(), layoutKernel); it != std::sregex_iterator(); ++it)
    kernels.push_back((*it)[1]);
  return kernels;
}

}  // namespace

// --fuse-layouts: attention's heads split out of the query, key and value and merged after the
// context computed in the products' operand copies (auto), or as copy kernels of their own
// (never): as many functions fewer as there were layout kernels, the same outputs.
TEST(GpuCli, LayoutOpsBeforeProductsRunInTheProductsOrAsKernelsOfTheirOwn) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir;
  OneLayerRun inProducts = compileAndRunOneLayer(dir, "bert-base", 30522, "--fuse-layouts", "auto");
  OneLayerRun apart = compileAndRunOneLayer(dir, "bert-base", 30522, "--fuse-layouts", "never");
  std::vector<std::string> layoutKernelsIn = layoutKernelsOf(inProducts.directory), layoutKernelsApart = layoutKernelsOf(apart.directory);
  // How many chains there are depends on the device (split_reductions cuts the products by its
  // multiprocessors): at least the attention's head split (query, key, value) and context merge.
  EXPECT_GE(layoutKernelsApart.size(), 4u) << fmt::format("{}", fmt::join(layoutKernelsApart, " "));
  EXPECT_TRUE(layoutKernelsIn.empty()) << fmt::format("{}", fmt::join(layoutKernelsIn, " "));
  EXPECT_EQ(inProducts.functions + int(layoutKernelsApart.size()), apart.functions);
  EXPECT_LT(largestRelativeDifference(inProducts.output, apart.output), 1e-5);
  expectOutput(runSubprocess({tesselCli(), "compile", "--model", "bert-base", "--fuse-layouts", "sometimes", "-o", dir.path() + "/x"}),
               "--fuse-layouts: sometimes not in {auto,never}", 2);
}

TEST(GpuCli, AttentionBlocksRunAsOneFunctionWithFuseAttention) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir;
  OneLayerRun fused = compileAndRunOneLayer(dir, "gpt2", 50257, "--fuse-attention", "auto");
  OneLayerRun apart = compileAndRunOneLayer(dir, "gpt2", 50257, "--fuse-attention", "never");
  EXPECT_EQ(fused.functions + 2, apart.functions);  // GPT-2's scores with their scale and mask, and the softmax, join the context
  EXPECT_LT(largestRelativeDifference(fused.output, apart.output), 1e-5);
  expectOutput(runSubprocess({tesselCli(), "compile", "--model", "gpt2", "--fuse-attention", "always", "-o", dir.path() + "/x"}),
               "--fuse-attention: always not in {auto,never}", 2);
}

TEST(GpuCli, QueryTheHardwareParametersOfADevice) {
  TESSEL_REQUIRE_OPENCL();
  auto one = runSubprocess({tesselCli(), "query", "--device", "opencl", "--hardware", "max_threads_per_block"});
  expectOutput(one, std::to_string(runtime::openclDeviceInfo(0).maxThreadsPerBlock) + "\n");
  auto all = runSubprocess({tesselCli(), "query", "--device", "opencl"});
  for (const char* key : {"max_threads_per_block", "max_shared_memory_per_block", "warp_size", "max_vthread_extent"})
    expectOutput(all, key);
  expectOutput(runSubprocess({tesselCli(), "query", "--device", "opencl", "--hardware", "cores"}),
               "error: --hardware cores: opencl has no such parameter", 1);
  expectOutput(runSubprocess({tesselCli(), "query", "--device", "cpu:1"}), "error: device 'cpu:1' is not a GPU", 1);
}

// The CPU's machine model, this machine's or a target's: what the schedules are derived from.
TEST(GpuCli, QueryTheMachineModelOfACpu) {
  auto here = runSubprocess({tesselCli(), "query", "--device", "cpu"});
  expectOutput(here, "  class            " + target::hostCpu().isaClass() + "\n");
  expectOutput(here, "  cores            " + std::to_string(target::hostCpu().cores) + " (from this process's CPU affinity)");
  auto haswell = runSubprocess({tesselCli(), "query", "--device", "cpu", "--target", "cpu -mcpu=haswell -l2=1M"});
  expectOutput(haswell, "cpu haswell (x86_64)\n  class            x86_64-avx2\n");
  expectOutput(haswell, "  vectors          32 bytes x 16 registers, 2 FMA units per core; a register tile keeps one register for the "
                        "broadcast input\n");
  auto zen3 = runSubprocess({tesselCli(), "query", "--device", "cpu", "--target", "cpu -mcpu=znver3"});
  expectOutput(zen3, "  vectors          32 bytes x 16 registers, 2 FMA units per core; Zen tuning: a register tile keeps no register for "
                     "the broadcast input\n");
  expectOutput(haswell, "  caches           L1d 32 KiB, L2 1 MiB, LLC 8 MiB (from the table of -mcpu names, l2 from the target string)");
  expectOutput(runSubprocess({tesselCli(), "query", "--device", "cpu", "--target", "cuda"}),
               "error: --target cuda: --device cpu prints a CPU target's machine model", 1);
  expectOutput(runSubprocess({tesselCli(), "query", "--device", "cpu", "--target", "cpu -mcpu=pentium9"}), "unknown CPU 'pentium9'", 1);
  expectOutput(runSubprocess({tesselCli(), "query", "--target", "cpu"}), "error: --target goes with --device cpu", 1);
}
