// The real `tessel` command on ONNX files: compile, tune, tasks and params with --model FILE.onnx and
// --input-shape, `tessel run` with named inputs and .npy outputs (checked against ONNX
// Runtime's outputs of tests/graph/onnx/models), and every mistake a one-line error.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>
#include <sstream>

#include "common/TesselCli.h"
#include "runtime/Npy.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

using tessel::testsupport::runTessel;

using namespace tessel;

namespace {

const std::string kOnnx = std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/";

void expectError(const SubprocessResult& r, const std::string& part, int exitCode = 1) {
  EXPECT_EQ(r.signal, 0) << r.output;
  EXPECT_EQ(r.exitCode, exitCode) << r.output;
  EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in:\n" << r.output;
}

double relativeError(const runtime::Tensor& actual, const runtime::Tensor& expected) {
  EXPECT_EQ(actual.shape(), expected.shape());
  double worst = 0, scale = 1e-12;
  for (int64_t i = 0; i < expected.numel() && actual.shape() == expected.shape(); ++i) {
    scale = std::max(scale, double(std::fabs(expected.dataAs<float>()[i])));
    worst = std::max(worst, std::fabs(double(actual.dataAs<float>()[i]) - expected.dataAs<float>()[i]));
  }
  return worst / scale;
}

TEST(OnnxCli, CompileAndRunWithNamedInputsAndNpyOutputs) {
  TempDir dir;
  const std::string model = kOnnx + "models/two_inputs/";
  auto compile = runTessel({"compile", "--model", model + "model.onnx", "-o", dir.path() + "/m"});
  ASSERT_TRUE(compile.ok()) << compile.output;
  EXPECT_NE(compile.output.find("compiled " + model + "model.onnx for "), std::string::npos) << compile.output;

  auto run = runTessel({"run", dir.path() + "/m", "--input", "gain=" + model + "input_gain.npy", "--input",
                     "image=" + model + "input_image.npy", "--output", dir.path() + "/scores.npy", "--output",
                     dir.path() + "/features.npy"});
  ASSERT_TRUE(run.ok()) << run.output;
  EXPECT_NE(run.output.find("output 0: float32 [1, 4] saved to " + dir.path() + "/scores.npy"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("output 1: float32 [1, 4, 8, 8] saved to"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("output shape [1, 4]; top-4:"), std::string::npos) << run.output;
  EXPECT_LT(relativeError(runtime::loadNpy(dir.path() + "/scores.npy"), runtime::loadNpy(model + "output_0.npy")), 1e-4);
  EXPECT_LT(relativeError(runtime::loadNpy(dir.path() + "/features.npy"), runtime::loadNpy(model + "output_1.npy")), 1e-4);

  expectError(runTessel({"run", dir.path() + "/m", "--input", "image=" + model + "input_image.npy"}),
              "error: input 'gain' is not given: pass --input gain=FILE.npy (or --random for the rest)");
  auto rest = runTessel({"run", dir.path() + "/m", "--input", "image=" + model + "input_image.npy", "--random"});
  EXPECT_TRUE(rest.ok()) << rest.output;
  expectError(runTessel({"run", dir.path() + "/m", "--input", "colour=" + model + "input_image.npy"}),
              "error: --input colour=" + model + "input_image.npy: the module has no input 'colour' (its inputs: image, gain)");
  expectError(runTessel({"run", dir.path() + "/m", "--input", "gain=" + model + "input_image.npy"}),
              "input 'gain': expected float32 [1, 4, 1, 1]");
  expectError(runTessel({"run", dir.path() + "/m", "--output", "a.npy", "--output", "b.npy", "--output", "c.npy"}),
              "error: 3 --output paths given, the module has 2 outputs");
}

TEST(OnnxCli, TasksParamsAndInputShapes) {
  TempDir dir;
  auto tasks = runTessel({"tasks", "--model", kOnnx + "models/conv_bn_relu/model.onnx"});
  ASSERT_TRUE(tasks.ok()) << tasks.output;
  EXPECT_NE(tasks.output.find("Extracted 1 tasks:\n   1  "), std::string::npos) << tasks.output;
  auto params = runTessel({"params", "--model", kOnnx + "models/conv_bn_relu/model.onnx", "-o", dir.path() + "/p.params"});
  ASSERT_TRUE(params.ok()) << params.output;
  EXPECT_NE(params.output.find("wrote the 6 parameters of"), std::string::npos) << params.output;

  const std::string symbolic = kOnnx + "bad/symbolic.onnx";
  expectError(runTessel({"tasks", "--model", symbolic}),
              "error: " + symbolic + ": input 'x': dimension 0 is symbolic ('N'): give its shape with --input-shape x:D0,D1,...");
  EXPECT_TRUE(runTessel({"compile", "--model", symbolic, "--input-shape", "x:2,3,8,8", "-o", dir.path() + "/s"}).ok());
  expectError(runTessel({"tasks", "--model", symbolic, "--input-shape", "x:2,3,8"}),
              "--input-shape x: 3 dimensions given, the model's input has 4");
  expectError(runTessel({"tasks", "--model", symbolic, "--input-shape", "x:2,3,8,8", "--batch", "2"}),
              "--batch applies to zoo networks");
  expectError(runTessel({"tasks", "--model", "resnet-18", "--input-shape", "data:1,3,64,64"}),
              "--input-shape applies to ONNX models; 'resnet-18' is a zoo network");
  expectError(runTessel({"tasks", "--model", symbolic, "--input-shape", "x:2,3,8,8", "--sequence", "32"}),
              "--sequence applies to zoo networks");
  expectError(runTessel({"tasks", "--model", symbolic, "--input-shape", "x:2,3,8,8", "--layers", "2"}),
              "--layers applies to zoo networks");
  // The zoo's transformers: a shorter sequence and fewer layers from the command line; their
  // params hold the learned weights under the PyTorch module's names (21 for one BERT layer:
  // five of the embeddings, sixteen of the layer).
  auto gpt2 = runTessel({"tasks", "--model", "gpt2", "--layers", "1", "--sequence", "32"});
  ASSERT_TRUE(gpt2.ok()) << gpt2.output;
  EXPECT_NE(gpt2.output.find("Extracted 6 tasks:\n   1  blocks.0.attention.qkv.bias_add"), std::string::npos) << gpt2.output;
  auto bertParams = runTessel({"params", "--model", "bert-base", "--layers", "1", "-o", dir.path() + "/bert.params"});
  ASSERT_TRUE(bertParams.ok()) << bertParams.output;
  EXPECT_NE(bertParams.output.find("wrote the 21 parameters of bert-base"), std::string::npos) << bertParams.output;
  expectError(runTessel({"tasks", "--model", "resnet-18", "--layers", "2"}), "model 'resnet-18': only the transformers have a layer count");
  expectError(runTessel({"tasks", "--model", dir.path() + "/missing.onnx"}), dir.path() + "/missing.onnx");
  expectError(runTessel({"compile", "--model", kOnnx + "bad/unsupported_op.onnx", "-o", dir.path() + "/u"}),
              "node 'det_1' (Det): operator 'Det' is not supported");
  expectError(runTessel({"tasks", "--model", kOnnx + "bad/cycle.onnx"}), "node 'first' (Add): input 'b' is not defined before the node");

  // A transformer's tasks: its projections and attention's products, named by long ONNX
  // values, the template column aligned after the longest name.
  auto bert = runTessel({"tasks", "--model", kOnnx + "exported/bert_dynamic_sequence/model.onnx", "--input-shape", "input_ids:1,16"});
  ASSERT_TRUE(bert.ok()) << bert.output;
  std::set<size_t> columns;
  std::istringstream lines(bert.output);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find("matmul_packed.x86");
    if (at == std::string::npos) at = line.find("batch_matmul.x86");
    if (at != std::string::npos) columns.insert(at);
  }
  EXPECT_NE(bert.output.find("matmul_packed.x86"), std::string::npos) << bert.output;
  EXPECT_NE(bert.output.find("batch_matmul.x86"), std::string::npos) << bert.output;
  EXPECT_EQ(columns.size(), 1u) << bert.output;
}

TEST(OnnxCli, TuneAnOnnxModel) {
  TempDir dir;
  auto tune = runTessel({"tune", "--model", kOnnx + "models/conv_bn_relu/model.onnx", "--n-trial", "2", "--log",
                      dir.path() + "/log.json", "-o", dir.path() + "/tuned"});
  ASSERT_TRUE(tune.ok()) << tune.output;
  EXPECT_NE(tune.output.find("wrote the tuned module to " + dir.path() + "/tuned"), std::string::npos) << tune.output;
  auto run = runTessel({"run", dir.path() + "/tuned", "--input", "x=" + kOnnx + "models/conv_bn_relu/input_x.npy", "--output",
                     dir.path() + "/y.npy"});
  ASSERT_TRUE(run.ok()) << run.output;
  EXPECT_LT(relativeError(runtime::loadNpy(dir.path() + "/y.npy"), runtime::loadNpy(kOnnx + "models/conv_bn_relu/output_0.npy")),
            1e-4);
}

TEST(OnnxCli, ProductsTooSmallForARegisterTileAreLeftUntunedNotAnError) {
  // ONNX's Gemm test model multiplies 3 x 6 by 6 x 5 and smaller: the dense rules find no register
  // tile for some of its products, so the template has nothing to search around. The network
  // still lists and tunes its other tasks (it used to stop at "the default schedule has no tile").
  TempDir dir;
  const std::string model = kOnnx + "models/gemm_matmul_softmax/model.onnx";
  auto tasks = runTessel({"tasks", "--model", model});
  ASSERT_TRUE(tasks.ok()) << tasks.output;
  auto tune = runTessel({"tune", "--model", model, "--n-trial", "2", "--log", dir.path() + "/log.json", "-o", dir.path() + "/tuned"});
  ASSERT_TRUE(tune.ok()) << tune.output;
  auto run = runTessel({"run", dir.path() + "/tuned", "--input", "x=" + kOnnx + "models/gemm_matmul_softmax/input_x.npy", "--output",
                        dir.path() + "/y.npy"});
  ASSERT_TRUE(run.ok()) << run.output;
  EXPECT_LT(relativeError(runtime::loadNpy(dir.path() + "/y.npy"), runtime::loadNpy(kOnnx + "models/gemm_matmul_softmax/output_0.npy")),
            1e-4);
}

}  // namespace
