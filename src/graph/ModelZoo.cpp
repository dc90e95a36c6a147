// The zoo's entry points: the table of names, option checks, dispatch to the families.
#include "graph/ModelZoo.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <utility>

#include "graph/ZooNetworks.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

using Builder = std::function<Graph(const ModelOptions&)>;

struct ZooEntry {
  std::string name;
  Builder build;
  bool narrows = false;  ///< has the narrower variants of ModelOptions::widthDivisor
  bool layered = false;  ///< a transformer: ModelOptions::layers applies
  bool tokens = false;   ///< reads token ids: ModelOptions::sequence applies
};

const std::vector<ZooEntry>& zooTable() {
  using namespace zoo;
  static const std::vector<ZooEntry> table = {
      {"resnet-18", [](const ModelOptions& o) { return resnet(18, o); }, true},
      {"resnet-34", [](const ModelOptions& o) { return resnet(34, o); }, true},
      {"resnet-50", [](const ModelOptions& o) { return resnet(50, o); }, true},
      {"resnet-101", [](const ModelOptions& o) { return resnet(101, o); }, true},
      {"resnet-152", [](const ModelOptions& o) { return resnet(152, o); }, true},
      {"mobilenet", mobilenetV1},
      {"mobilenet-v2", mobilenetV2},
      {"vgg-11", [](const ModelOptions& o) { return vgg(11, o); }, true},
      {"vgg-13", [](const ModelOptions& o) { return vgg(13, o); }, true},
      {"vgg-16", [](const ModelOptions& o) { return vgg(16, o); }, true},
      {"vgg-19", [](const ModelOptions& o) { return vgg(19, o); }, true},
      {"squeezenet_v1.0", [](const ModelOptions& o) { return squeezenet("1.0", o); }},
      {"squeezenet_v1.1", [](const ModelOptions& o) { return squeezenet("1.1", o); }},
      {"inception_v3", inceptionV3},
      {"bert-base", bertBase, false, true, true},
      {"gpt2", gpt2Small, false, true, true},
      {"vit-b16", vitB16, false, true, false},
  };
  return table;
}

}  // namespace

int64_t zoo::imageSize(const std::string& network, const ModelOptions& options, int64_t defaultSize, int64_t minimum) {
  int64_t size = options.imageSize > 0 ? options.imageSize : defaultSize;
  TESSEL_CHECK(size >= minimum, "{}: image size {} is too small (at least {}x{})", network, size, minimum, minimum);
  return size;
}

std::vector<std::string> modelNames() {
  std::vector<std::string> names;
  for (const ZooEntry& entry : zooTable()) names.push_back(entry.name);
  return names;
}

Graph buildModel(const std::string& name, const ModelOptions& options) {
  TESSEL_CHECK(options.batch >= 1, "model '{}': batch must be at least 1, got {}", name, options.batch);
  TESSEL_CHECK(options.imageSize >= 0, "model '{}': image size must be positive (or 0: the network's own), got {}", name,
               options.imageSize);
  TESSEL_CHECK(options.classes >= 1, "model '{}': classes must be at least 1, got {}", name, options.classes);
  TESSEL_CHECK(options.classifierWidth >= 0, "model '{}': classifier width must be positive (or 0: the network's own), got {}",
               name, options.classifierWidth);
  TESSEL_CHECK(options.widthDivisor >= 1 && 64 % options.widthDivisor == 0,
               "model '{}': width divisor must divide 64, got {}", name, options.widthDivisor);
  TESSEL_CHECK(options.sequence >= 0, "model '{}': sequence must be positive (or 0: the network's own), got {}", name,
               options.sequence);
  TESSEL_CHECK(options.layers >= 0, "model '{}': layers must be positive (or 0: the network's own), got {}", name,
               options.layers);
  for (const ZooEntry& entry : zooTable())
    if (entry.name == name) {
      TESSEL_CHECK(options.widthDivisor == 1 || entry.narrows,
                   "model '{}': only ResNet and VGG have narrower variants (width divisor {})", name, options.widthDivisor);
      TESSEL_CHECK(options.layers == 0 || entry.layered, "model '{}': only the transformers have a layer count (layers {})",
                   name, options.layers);
      TESSEL_CHECK(options.sequence == 0 || entry.tokens, "model '{}': only bert-base and gpt2 read a sequence of tokens (sequence {})",
                   name, options.sequence);
      return entry.build(options);
    }
  if (name.rfind("resnet-", 0) == 0) {
    std::string depth = name.substr(7);
    if (!depth.empty() && depth.find_first_not_of("0123456789") == std::string::npos && depth.size() < 6)
      return zoo::resnet(std::stoi(depth), options);  // an error naming the depths there are
  }
  fail("unknown model '{}' (known: {})", name, fmt::join(modelNames(), ", "));
}

}  // namespace tessel::graph
