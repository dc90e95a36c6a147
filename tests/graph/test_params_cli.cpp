// `tessel params` writes a zoo network's parameters; `tessel compile --params` builds with them;
// bad files and options are errors that name the problem.
#include <gtest/gtest.h>

#include <cstring>

#include "common/TesselCli.h"
#include "graph/GraphParams.h"
#include "graph/ModelZoo.h"
#include "runtime/Params.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::graph;

namespace {

void expectIn(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(ParamsCli, WritesTheZooParametersAndCompilesWithThem) {
  TempDir dir;
  std::string nchw = dir.path() + "/nchw.params";
  auto written = runSubprocess({tesselCli(), "params", "--model", "squeezenet_v1.1", "-o", nchw});
  ASSERT_TRUE(written.ok()) << written.output;
  expectIn(written.output, "wrote the 52 parameters of squeezenet_v1.1 (NCHW, 1235496 values)");
  Graph zoo = buildModel("squeezenet_v1.1");
  auto file = runtime::loadParams(nchw);
  ASSERT_EQ(file.size(), zoo.params().size());
  for (const auto& [name, value] : zoo.params()) {
    ASSERT_TRUE(file.count(name)) << name;
    EXPECT_EQ(std::memcmp(file.at(name).data(), value.data(), value.nbytes()), 0) << name;
  }

  // Other weights (another seed) in a file: the module holds them. Without the passes the
  // module's parameters are the graph's own, so they can be compared.
  ModelOptions other;
  other.seed = 5;
  Graph reseeded = buildModel("squeezenet_v1.1", other);
  std::string otherFile = dir.path() + "/seed5.params";
  saveGraphParams(reseeded, otherFile);
  auto compiled = runSubprocess({tesselCli(), "compile", "--model", "squeezenet_v1.1", "--params", otherFile, "--no-optimize",
                                 "--desired-layout", "keep", "-o", dir.path() + "/module"});
  ASSERT_TRUE(compiled.ok()) << compiled.output;
  expectIn(compiled.output, "weights from " + otherFile);
  auto module = runtime::loadParams(dir.path() + "/module/params.bin");
  const auto& want = reseeded.params().at("conv1_weight");
  ASSERT_TRUE(module.count("conv1_weight"));
  EXPECT_EQ(std::memcmp(module.at("conv1_weight").data(), want.data(), want.nbytes()), 0);
}

TEST(ParamsCli, BadFilesAndOptionsAreErrors) {
  TempDir dir;
  std::string nhwc = dir.path() + "/nhwc.params";
  ASSERT_TRUE(runSubprocess({tesselCli(), "params", "--model", "squeezenet_v1.1", "--layout", "NHWC", "-o", nhwc}).ok());
  // An NHWC file for the NCHW network: the error says a params file is layout-specific.
  auto wrongLayout = runSubprocess({tesselCli(), "compile", "--model", "squeezenet_v1.1", "--params", nhwc, "-o", dir.path() + "/m"});
  EXPECT_EQ(wrongLayout.exitCode, 1);
  expectIn(wrongLayout.output, nhwc);
  expectIn(wrongLayout.output, "layout-specific");
  // Another network's file: the parameters it lacks and the ones it has in excess.
  auto wrongModel = runSubprocess({tesselCli(), "compile", "--model", "mobilenet-v2", "--layout", "NHWC", "--params", nhwc, "-o",
                                   dir.path() + "/m"});
  EXPECT_EQ(wrongModel.exitCode, 1);
  expectIn(wrongModel.output, "missing from the file");
  expectIn(wrongModel.output, "that the graph does not have");

  auto missing = runSubprocess({tesselCli(), "compile", "--model", "squeezenet_v1.1", "--params", dir.path() + "/none.params", "-o",
                                dir.path() + "/m"});
  EXPECT_EQ(missing.exitCode, 1);
  expectIn(missing.output, "none.params");
  std::string cut = dir.path() + "/cut.params";
  std::string bytes = readFile(nhwc);
  writeFile(cut, bytes.substr(0, bytes.size() - 100));
  auto truncated = runSubprocess({tesselCli(), "compile", "--model", "squeezenet_v1.1", "--layout", "NHWC", "--params", cut, "-o",
                                  dir.path() + "/m"});
  EXPECT_EQ(truncated.exitCode, 1);
  expectIn(truncated.output, "truncated");

  auto unknown = runSubprocess({tesselCli(), "params", "--model", "alexnet", "-o", dir.path() + "/x.params"});
  EXPECT_EQ(unknown.exitCode, 1);
  expectIn(unknown.output, "unknown model 'alexnet' (known: resnet-18");
  expectIn(unknown.output, "inception_v3");
  auto batch = runSubprocess({tesselCli(), "params", "--model", "vgg-11", "--batch", "0", "-o", dir.path() + "/x.params"});
  EXPECT_EQ(batch.exitCode, 2);  // a usage error: refused where the command line is read
  expectIn(batch.output, "--batch: 0 is out of range [1, 65536]");
  auto layout = runSubprocess({tesselCli(), "params", "--model", "vgg-11", "--layout", "NCWH", "-o", dir.path() + "/x.params"});
  EXPECT_EQ(layout.exitCode, 2);  // refused where the command line is read, as --batch 0
  expectIn(layout.output, "--layout: NCWH not in {NCHW,NHWC}");
}

}  // namespace
