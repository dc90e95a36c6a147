#include "cli/ClassifyCommand.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "cli/Image.h"
#include "cli/VtaFlow.h"
#include "cli/OptionChecks.h"
#include "runtime/GraphExecutor.h"
#include "runtime/MachineLoad.h"
#include "support/Error.h"
#include "support/Files.h"

namespace tessel::cli {

extern const char* const kImageNetClasses;

namespace {

constexpr FileKind kLabelsFile{"labels file", uint64_t(16) << 20};
/// The range of --mean and --std values, and the least --std.
constexpr double kMostNormalization = 1e6;
constexpr double kLeastStd = 1e-6;

struct ClassifyOptions {
  std::string module, image, labels;
  int top = 5;
  std::vector<float> mean{0.485f, 0.456f, 0.406f}, std{0.229f, 0.224f, 0.225f};
};

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

/// Class names for `classes` outputs: --labels, else ImageNet's for 1000 classes, else none.
std::vector<std::string> classNames(const ClassifyOptions& o, int64_t classes) {
  if (!o.labels.empty()) {
    auto names = splitLines(readFile(o.labels, kLabelsFile));
    TESSEL_CHECK(int64_t(names.size()) == classes, "--labels {}: {} names for the module's {} classes", o.labels, names.size(),
                 classes);
    return names;
  }
  if (classes == 1000) return splitLines(kImageNetClasses);
  return {};
}

/// Probabilities: the scores themselves when they already are (a network ending in softmax),
/// else their softmax.
std::vector<double> probabilities(const float* scores, int64_t n, bool& applied) {
  double sum = 0;
  bool nonNegative = true;
  for (int64_t i = 0; i < n; ++i) {
    sum += scores[i];
    nonNegative = nonNegative && scores[i] >= 0;
  }
  std::vector<double> p(scores, scores + n);
  applied = !(nonNegative && std::abs(sum - 1) < 1e-3);
  if (!applied) return p;
  double top = *std::max_element(p.begin(), p.end()), total = 0;
  for (double& v : p) total += (v = std::exp(v - top));
  for (double& v : p) v /= total;
  return p;
}

void classify(const ClassifyOptions& o) {
  TESSEL_CHECK(o.mean.size() == 3 && o.std.size() == 3, "--mean and --std take three values (R, G, B)");
  for (float s : o.std) TESSEL_CHECK(s > 0, "--std: {} is not positive", s);
  RgbImage image = decodeImage(o.image);
  Normalization n;
  std::copy(o.mean.begin(), o.mean.end(), n.mean.begin());
  std::copy(o.std.begin(), o.std.end(), n.std.begin());
  runtime::Tensor out;
  std::vector<int64_t> inputShape;
  if (isVtaModule(o.module)) {
    // On the VTA simulator: its statistics first, as seed 004 prints them before the prediction.
    VtaModule module = loadVtaModule(o.module);
    inputShape = module.inputShape();
    out = runVtaModule(module, imageTensor(image, inputShape, n)).at(0);
  } else {
    auto executor = runtime::GraphExecutor::load(o.module);
    TESSEL_CHECK(executor.numInputs() >= 1, "{}: the module has no input", o.module);
    inputShape = executor.inputShape(0);
    executor.setInput(0, imageTensor(image, inputShape, n));
    runtime::useFreeCores();
    executor.run();
    out = executor.getOutput(0);
  }
  TESSEL_CHECK(out.dtype() == DataType::float32() && out.numel() > 0 && out.numel() == out.shape().back(),
               "the module's first output is {} {}: classify needs one row of class scores", out.dtype().str(),
               runtime::formatShape(out.shape()));
  int64_t classes = out.numel();
  auto names = classNames(o, classes);
  bool softmaxApplied = false;
  auto p = probabilities(out.dataAs<float>(), classes, softmaxApplied);
  std::vector<int64_t> order(static_cast<size_t>(classes));
  std::iota(order.begin(), order.end(), 0);
  size_t top = std::min<size_t>(size_t(o.top), order.size());
  std::partial_sort(order.begin(), order.begin() + long(top), order.end(), [&](int64_t a, int64_t b) {
    // Equal probabilities in class order, so that the listing is deterministic.
    return p[size_t(a)] > p[size_t(b)] || (p[size_t(a)] == p[size_t(b)] && a < b);
  });
  fmt::print("{} ({}x{}) resized to the module's input {}; top-{}{}:\n", o.image, image.width, image.height,
             runtime::formatShape(inputShape), top, softmaxApplied ? " (softmax of the scores)" : "");
  for (size_t i = 0; i < top; ++i) {
    int64_t c = order[i];
    std::string name = names.empty() ? "" : names[size_t(c)];
    fmt::print("  class {:>5}  probability {:.5f}  {}\n", c, p[size_t(c)], name);
  }
}

}  // namespace

void addClassifyCommand(CLI::App& app) {
  auto o = std::make_shared<ClassifyOptions>();
  CLI::App* c = app.add_subcommand("classify", "classify a PNG or JPEG image with a compiled module and print the top classes");
  c->add_option("module", o->module, "the module directory (tessel compile -o DIR)")->required();
  c->add_option("image", o->image, "a PNG or JPEG image")->required();
  c->add_option("--labels", o->labels, "class names, one per line in class order (default: ImageNet's 1000 for 1000 classes)");
  c->add_option("--top", o->top, "how many classes to print")->check(integerIn(1, 1000000));
  // Each value finite and in a range that keeps every normalized pixel, (v - mean) / std with v
  // in [0, 1], a finite float: NaN, inf or a std of 1e-45 gave a top-5 of garbage with rc 0.
  c->add_option("--mean", o->mean, "per-channel mean of the normalization, R G B, on values in [0, 1] (default ImageNet's)")
      ->expected(3)
      ->check(numberIn(-kMostNormalization, kMostNormalization));
  c->add_option("--std", o->std, "per-channel standard deviation, R G B (default ImageNet's)")
      ->expected(3)
      ->check(numberIn(kLeastStd, kMostNormalization));
  c->callback([o] { classify(*o); });
}

}  // namespace tessel::cli
