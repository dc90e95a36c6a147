// `tessel classify` with the real binary: PNG and JPEG pictures (made by ImageMagick) of one
// colour through tests/graph/onnx/models/rgb_classifier, whose first three class scores are the
// mean normalized R, G and B, so that decoding, channel order, resizing, ImageNet's
// normalization, the softmax and the class names are all checked by the printed top class and
// its probability; damaged images and unfit modules are one-line errors.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "common/TesselCli.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

using tessel::testsupport::tesselCli;

using namespace tessel;

namespace {

const std::string kModels = std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/models/";

SubprocessResult run(std::vector<std::string> arguments) {
  SubprocessOptions options;
  options.timeout = std::chrono::seconds(300);
  return runSubprocess(arguments, options);
}

SubprocessResult tessel(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), tesselCli());
  return run(arguments);
}

void expectIn(const SubprocessResult& r, const std::string& part) {
  EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in:\n" << r.output;
}

class ClassifyCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>("tessel-classify");
    auto compile = tessel({"compile", "--model", kModels + "rgb_classifier/model.onnx", "-o", path("module")});
    ASSERT_TRUE(compile.ok()) << compile.output;
    for (auto [file, colour] : std::vector<std::pair<std::string, std::string>>{
             {"red.png", "#ff0000"}, {"green.jpg", "#00ff00"}, {"blue.png", "#0000ff"}}) {
      auto made = run({"convert", "-size", "40x30", "xc:" + colour, path(file)});
      ASSERT_TRUE(made.ok()) << "ImageMagick (scripts/install-deps.sh installs it): " << made.output;
    }
    // A picture that does not compress to nothing, to cut short.
    ASSERT_TRUE(run({"convert", "-size", "120x90", "plasma:fractal", path("noise.png")}).ok());
    ASSERT_TRUE(run({"convert", path("noise.png"), path("noise.jpg")}).ok());
  }
  static void TearDownTestSuite() { dir_.reset(); }
  static std::string path(const std::string& name) { return dir_->path() + "/" + name; }
  static std::unique_ptr<TempDir> dir_;
};
std::unique_ptr<TempDir> ClassifyCli::dir_;

TEST_F(ClassifyCli, TopClassesWithNamesAndProbabilities) {
  // Red (255, 0, 0) normalized: R 2.2489, G -2.0357, B -1.8044; the other 997 scores are 0, so
  // class 0's probability is e^2.2489 / (e^2.2489 + e^-2.0357 + e^-1.8044 + 997) = 0.00941.
  auto red = tessel({"classify", path("module"), path("red.png")});
  ASSERT_TRUE(red.ok()) << red.output;
  expectIn(red, "red.png (40x30) resized to the module's input [1, 3, 16, 16]; top-5 (softmax of the scores):\n");
  expectIn(red, "  class     0  probability 0.00941  tench\n  class     3  probability 0.00099  tiger shark\n"
                "  class     4  probability 0.00099  hammerhead\n");
  auto green = tessel({"classify", path("module"), path("green.jpg"), "--top", "1"});
  ASSERT_TRUE(green.ok()) << green.output;
  expectIn(green, "top-1 (softmax of the scores):\n  class     1  probability 0.01");
  expectIn(green, "goldfish\n");
  auto blue = tessel({"classify", path("module"), path("blue.png"), "--top", "2"});
  expectIn(blue, "  class     2  probability 0.0");
  expectIn(blue, "great white shark\n");

  std::string labels;
  for (int i = 0; i < 1000; ++i) labels += "label" + std::to_string(i) + "\n";
  writeFile(path("labels.txt"), labels);
  expectIn(tessel({"classify", path("module"), path("blue.png"), "--labels", path("labels.txt")}), "  class     2  probability");
  expectIn(tessel({"classify", path("module"), path("blue.png"), "--labels", path("labels.txt")}), "label2\n");
  // Another normalization: a mean of 1 makes every channel of a saturated colour 0 or negative.
  auto plain = tessel({"classify", path("module"), path("red.png"), "--mean", "1", "1", "1", "--std", "1", "1", "1", "--top", "1"});
  expectIn(plain, "probability 0.00");
}

TEST_F(ClassifyCli, DamagedImagesAndUnfitModulesAreErrors) {
  std::string png = readFile(path("noise.png")), jpg = readFile(path("noise.jpg"));
  writeFile(path("cut.png"), png.substr(0, png.size() / 2));
  writeFile(path("cut.jpg"), jpg.substr(0, jpg.size() / 2));
  auto cutPng = tessel({"classify", path("module"), path("cut.png")});
  EXPECT_EQ(cutPng.exitCode, 1);
  expectIn(cutPng, "error: " + path("cut.png") + ": the PNG image is truncated (it does not end with an IEND chunk)");
  auto cutJpg = tessel({"classify", path("module"), path("cut.jpg")});
  EXPECT_EQ(cutJpg.exitCode, 1);
  expectIn(cutJpg, "error: " + path("cut.jpg") + ": the JPEG image is truncated (it has no end-of-image marker)");
  // A damaged middle: the PNG's data no longer inflates.
  std::string damaged = png;
  for (size_t i = 100; i < 400; ++i) damaged[i] = char(i * 7);
  writeFile(path("damaged.png"), damaged);
  expectIn(tessel({"classify", path("module"), path("damaged.png")}), "error: " + path("damaged.png") + ": the image cannot be decoded: its data is damaged");
  writeFile(path("text.png"), "not an image\n");
  expectIn(tessel({"classify", path("module"), path("text.png")}), "not a PNG or JPEG image");
  writeFile(path("few.txt"), "a\nb\n");
  expectIn(tessel({"classify", path("module"), path("red.png"), "--labels", path("few.txt")}),
           "--labels " + path("few.txt") + ": 2 names for the module's 1000 classes");
  expectIn(tessel({"classify", path("module"), path("red.png"), "--std", "1", "0", "1"}), "--std: 0 is out of range [1e-06, 1000000]");

  ASSERT_TRUE(tessel({"compile", "--model", kModels + "conv_bn_relu/model.onnx", "-o", path("conv")}).ok());
  expectIn(tessel({"classify", path("conv"), path("red.png")}), "classify needs one row of class scores");
}

// Issue 39, defect 8: NaN, inf or a std of 1e-45 printed a normal-looking top-5 with rc 0. Every
// value is checked as the other float options are, and the message names the option.
TEST_F(ClassifyCli, NormalizationValuesMustBeFiniteAndInRange) {
  auto refused = [&](std::vector<std::string> values, const std::string& message) {
    std::vector<std::string> arguments{"classify", path("module"), path("red.png")};
    arguments.insert(arguments.end(), values.begin(), values.end());
    auto r = tessel(arguments);
    EXPECT_EQ(r.exitCode, 2) << r.output;
    expectIn(r, message);
    EXPECT_EQ(r.output.find("top-"), std::string::npos) << r.output;
  };
  refused({"--mean", "nan", "nan", "nan"}, "--mean: nan is not a finite number");
  refused({"--mean", "0.5", "inf", "0.5"}, "--mean: inf is not a finite number");
  refused({"--mean", "1e300", "0", "0"}, "--mean: 1e300 is out of range [-1000000, 1000000]");
  refused({"--std", "1e-45", "1", "1"}, "--std: 1e-45 is out of range [1e-06, 1000000]");
  refused({"--std", "1", "inf", "1"}, "--std: inf is not a finite number");
  refused({"--std", "1", "1", "NaN"}, "--std: NaN is not a finite number");
  refused({"--std", "-1", "1", "1"}, "--std: -1 is out of range");
  // In range, the values are used.
  auto plain = tessel({"classify", path("module"), path("red.png"), "--mean", "-1e6", "0", "0", "--std", "1e-6", "1", "1"});
  EXPECT_EQ(plain.exitCode, 0) << plain.output;
  expectIn(plain, "top-5");
}

}  // namespace
