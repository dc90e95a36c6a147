// The ONNX files today's exporters write: IR version 10 and opsets up to 21 (PyTorch 2.x), weights
// in a file beside the model (external data), and the structure checks tessel makes itself now
// that no old checker stands in front of the importer. Each model is written by the test
// (common/OnnxModels.h); the values are checked by the reference interpreter against values
// computed by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/ErrorText.h"
#include "common/FloatTensors.h"
#include "common/OnnxModels.h"
#include "graph/Interpreter.h"
#include "graph/frontends/Onnx.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testsupport;

namespace {

/// y = x + w: the model of the external-data tests, its weight `w` (float32[2, 3]) described by
/// `external` (no data inside the model).
std::string addWeightModel(std::map<std::string, std::string> external, int64_t irVersion = 10, int64_t opset = 21) {
  OnnxValue w = onnxInput("w", {2, 3});
  w.external = std::move(external);
  return onnxModelBytes({{"Add", "add", {"x", "w"}, {"y"}, {}}}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {w}, opset,
                        irVersion);
}

const std::vector<float> kWeight = {1, 2, 3, 4, 5, 6};

/// The weight's bytes after `prefix` bytes of other data, as an exporter packs tensors into one file.
std::string weightFile(size_t prefix) {
  std::string bytes(prefix, '\x7f');
  bytes.append(reinterpret_cast<const char*>(kWeight.data()), kWeight.size() * sizeof(float));
  return bytes;
}

/// Writes the model (and the data files) into `dir` and imports it from there.
Graph importFrom(const TempDir& dir, const std::string& model, const std::map<std::string, std::string>& files = {}) {
  for (const auto& [name, bytes] : files) writeFile(dir.path() + "/" + name, bytes);
  writeFile(dir.path() + "/model.onnx", model);
  return importOnnx(dir.path() + "/model.onnx");
}

TEST(OnnxFiles, IrVersion10AndOpset21AsPyTorchWritesThem) {
  std::string bytes = onnxModelBytes({{"Relu", "relu", {"x"}, {"y"}, {}}}, {onnxInput("x", {1, 4})}, {onnxOutput("y", 2)}, {}, 21, 10);
  Graph g = importOnnxBytes(bytes, "relu.onnx");
  auto y = interpretGraph(g, {{"x", floatTensor({1, 4}, {-1, 2, -3, 4})}})[0];
  EXPECT_EQ(floatValues(y), (std::vector<float>{0, 2, 0, 4}));
  // One past what tessel knows is refused with the range it reads.
  std::string ir11 = onnxModelBytes({{"Relu", "relu", {"x"}, {"y"}, {}}}, {onnxInput("x", {1, 4})}, {onnxOutput("y", 2)}, {}, 21, 11);
  expectContains(errorOf([&] { importOnnxBytes(ir11, "ir11.onnx"); }),
                 "ir11.onnx: IR version 11 is not supported (tessel reads IR versions 3 to 10)");
  std::string opset22 = onnxModelBytes({{"Relu", "relu", {"x"}, {"y"}, {}}}, {onnxInput("x", {1, 4})}, {onnxOutput("y", 2)}, {}, 22, 10);
  expectContains(errorOf([&] { importOnnxBytes(opset22, "opset22.onnx"); }),
                 "opset22.onnx: opset 22 is not supported (tessel reads opsets 7 to 21)");
}

TEST(OnnxFiles, ExternalDataIsReadFromBesideTheModel) {
  TempDir dir("tessel-onnx-external");
  // At an offset inside a file shared with other tensors, with and without a length.
  for (const auto& entries : {std::map<std::string, std::string>{{"location", "model.onnx.data"}, {"offset", "8"}, {"length", "24"}},
                              std::map<std::string, std::string>{{"location", "model.onnx.data"}, {"offset", "8"}}}) {
    Graph g = importFrom(dir, addWeightModel(entries), {{"model.onnx.data", weightFile(8)}});
    auto y = interpretGraph(g, {{"x", floatTensor({2, 3}, {10, 10, 10, 10, 10, 10})}})[0];
    EXPECT_EQ(floatValues(y), (std::vector<float>{11, 12, 13, 14, 15, 16}));
  }
  // In a subfolder of the model's folder.
  std::filesystem::create_directory(dir.path() + "/weights");
  Graph g = importFrom(dir, addWeightModel({{"location", "weights/w.bin"}}), {{"weights/w.bin", weightFile(0)}});
  auto y = interpretGraph(g, {{"x", floatTensor({2, 3}, {0, 0, 0, 0, 0, 0})}})[0];
  EXPECT_EQ(floatValues(y), kWeight);
}

TEST(OnnxFiles, ExternalDataThatCannotBeRightIsRefusedNamingTheTensor) {
  TempDir dir("tessel-onnx-external-bad");
  auto error = [&](std::map<std::string, std::string> entries) {
    return errorOf([&] { importFrom(dir, addWeightModel(std::move(entries)), {{"w.data", weightFile(0)}}); });
  };
  expectContains(error({{"location", "w.data"}, {"offset", "4"}}),
                 "initializer 'w': external data 'w.data' has 24 bytes, too few for 24 bytes from offset 4");
  expectContains(error({{"location", "w.data"}, {"length", "20"}}),
                 "initializer 'w': its external data is 20 bytes long, the tensor's shape and type need 24");
  expectContains(error({{"location", "w.data"}, {"offset", "-4"}}), "initializer 'w': external data offset '-4' is not a byte count");
  expectContains(error({{"location", "missing.data"}}), "initializer 'w': its external data file");
  expectContains(error({{"location", "missing.data"}}), "missing.data cannot be read: no such file");
  expectContains(error({{"offset", "0"}}), "initializer 'w': its data is external but names no location");
  expectContains(error({{"location", "/etc/passwd"}}),
                 "initializer 'w': external data location '/etc/passwd' is an absolute path (ONNX locations are relative to the "
                 "model's folder)");
  expectContains(error({{"location", "../w.data"}}), "initializer 'w': external data location '../w.data' leaves the model's folder");
  expectContains(error({{"location", "sub/../../w.data"}}), "leaves the model's folder");
  // A symbolic link inside the folder that points outside it leaves the folder too.
  TempDir outside("tessel-onnx-outside");
  writeFile(outside.path() + "/secret.data", weightFile(0));
  std::filesystem::create_symlink(outside.path() + "/secret.data", dir.path() + "/link.data");
  expectContains(error({{"location", "link.data"}}), "initializer 'w': external data location 'link.data' leaves the model's folder");
  // A model given as bytes has no folder to read from.
  expectContains(errorOf([&] { importOnnxBytes(addWeightModel({{"location", "w.data"}}), "bytes.onnx"); }),
                 "bytes.onnx: initializer 'w': its data is in an external file, and the model was not read from a file");
}

TEST(OnnxFiles, TheStructureIsCheckedWithoutOnnxsChecker) {
  auto error = [](std::vector<OnnxNode> nodes, std::vector<OnnxValue> initializers = {}, std::vector<OnnxValue> outputs = {}) {
    if (outputs.empty()) outputs = {onnxOutput("y", 2)};
    return errorOf([&] { importOnnxBytes(onnxModelBytes(nodes, {onnxInput("x", {1, 4})}, outputs, initializers, 21, 10), "m.onnx"); });
  };
  expectContains(error({{"Relu", "second", {"t"}, {"y"}, {}}, {"Relu", "first", {"x"}, {"t"}, {}}}),
                 "m.onnx: node 'second' (Relu): input 't' is not defined before the node (the nodes are not in topological "
                 "order, or the graph has a cycle)");
  expectContains(error({{"Relu", "a", {"x"}, {"y"}, {}}, {"Relu", "b", {"x"}, {"y"}, {}}}),
                 "m.onnx: node 'b' (Relu): output 'y' is already defined (ONNX values are assigned once)");
  expectContains(error({{"Relu", "a", {"x"}, {"x"}, {}}}), "node 'a' (Relu): output 'x' is already defined");
  expectContains(error({{"Relu", "a", {"x"}, {"t"}, {}}}), "m.onnx: graph output 'y' is not computed by any node, nor an input or initializer");
  expectContains(error({{"Add", "a", {"x", "w"}, {"y"}, {}}}, {onnxFloats("w", {4}, {1, 2, 3, 4}), onnxFloats("w", {4}, {1, 2, 3, 4})}),
                 "m.onnx: initializer 'w' is defined twice");
  expectContains(error({{"Frobnicate", "f", {"x"}, {"y"}, {}}}), "node 'f' (Frobnicate): operator 'Frobnicate' is not supported");
  OnnxNode cast{"Cast", "c", {"x"}, {"y"}, {}};
  expectContains(error({cast}), "node 'c' (Cast): attribute 'to' is missing");
}

TEST(OnnxFiles, SplitIntoNumOutputsFromOpset18) {
  // Opset 18: `num_outputs` parts, the last one smaller when the extent does not divide.
  OnnxNode split{"Split", "s", {"x"}, {"a", "b"}, {}};
  split.ints["axis"] = 1;
  split.ints["num_outputs"] = 2;
  std::string bytes = onnxModelBytes({split}, {onnxInput("x", {1, 5})}, {onnxOutput("a", 2), onnxOutput("b", 2)}, {}, 18, 10);
  Graph g = importOnnxBytes(bytes, "split.onnx");
  auto out = interpretGraph(g, {{"x", floatTensor({1, 5}, {1, 2, 3, 4, 5})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(floatValues(out[0]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(floatValues(out[1]), (std::vector<float>{4, 5}));
  split.ints["num_outputs"] = 3;
  expectContains(errorOf([&] {
                   importOnnxBytes(onnxModelBytes({split}, {onnxInput("x", {1, 5})}, {onnxOutput("a", 2), onnxOutput("b", 2)}, {}, 18, 10),
                                   "split3.onnx");
                 }),
                 "node 's' (Split): num_outputs is 3, the node has 2 outputs");
  // An opset-17 file carrying the attribute, as PyTorch 2.11's exporter writes GPT-2 when asked
  // for opset 17: read the same.
  split.ints["num_outputs"] = 2;
  Graph g17 = importOnnxBytes(onnxModelBytes({split}, {onnxInput("x", {1, 5})}, {onnxOutput("a", 2), onnxOutput("b", 2)}, {}, 17, 10),
                              "split17.onnx");
  auto out17 = interpretGraph(g17, {{"x", floatTensor({1, 5}, {1, 2, 3, 4, 5})}});
  ASSERT_EQ(out17.size(), 2u);
  EXPECT_EQ(floatValues(out17[0]), (std::vector<float>{1, 2, 3}));
}

TEST(OnnxFiles, PadOnListedAxesFromOpset18) {
  // pads [1, 2] on axis 1 only: one zero before, two after.
  OnnxNode pad{"Pad", "p", {"x", "pads", "", "axes"}, {"y"}, {}};
  std::string bytes = onnxModelBytes({pad}, {onnxInput("x", {1, 2})}, {onnxOutput("y", 2)},
                                     {onnxInt64s("pads", {2}, {1, 2}), onnxInt64s("axes", {1}, {-1})}, 18, 10);
  Graph g = importOnnxBytes(bytes, "pad.onnx");
  auto y = interpretGraph(g, {{"x", floatTensor({1, 2}, {7, 8})}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(floatValues(y), (std::vector<float>{0, 7, 8, 0, 0}));
}

TEST(OnnxFiles, ResizeOfListedAxesFromOpset18) {
  // Sizes for axes 2 and 3 only: N and C keep their extents.
  OnnxNode resize{"Resize", "r", {"x", "", "", "sizes"}, {"y"}, {}};
  resize.intLists["axes"] = {2, 3};
  resize.strings["mode"] = "nearest";
  std::string bytes = onnxModelBytes({resize}, {onnxInput("x", {1, 1, 1, 2})}, {onnxOutput("y", 4)},
                                     {onnxInt64s("sizes", {2}, {2, 4})}, 18, 10);
  Graph g = importOnnxBytes(bytes, "resize.onnx");
  auto y = interpretGraph(g, {{"x", floatTensor({1, 1, 1, 2}, {3, 5})}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 2, 4}));
  EXPECT_EQ(floatValues(y), (std::vector<float>{3, 3, 5, 5, 3, 3, 5, 5}));
  // Antialiasing changes a shrinking resize: refused there, by name.
  resize.ints["antialias"] = 1;
  std::string shrink = onnxModelBytes({resize}, {onnxInput("x", {1, 1, 4, 4})}, {onnxOutput("y", 4)},
                                      {onnxInt64s("sizes", {2}, {2, 2})}, 18, 10);
  expectContains(errorOf([&] { importOnnxBytes(shrink, "shrink.onnx"); }),
                 "node 'r' (Resize): attribute 'antialias' is not supported: only where no axis shrinks");
}

TEST(OnnxFiles, AveragePoolDilationsFromOpset19AreReadNotIgnored) {
  OnnxNode pool{"AveragePool", "p", {"x"}, {"y"}, {}};
  pool.intLists["kernel_shape"] = {2, 2};
  pool.intLists["dilations"] = {2, 2};
  std::string bytes = onnxModelBytes({pool}, {onnxInput("x", {1, 1, 4, 4})}, {onnxOutput("y", 4)}, {}, 19, 10);
  expectContains(errorOf([&] { importOnnxBytes(bytes, "pool.onnx"); }), "node 'p' (AveragePool)");
  expectContains(errorOf([&] { importOnnxBytes(bytes, "pool.onnx"); }), "dilation 2x2 is not supported");
  // Dilations of 1 are plain pooling.
  pool.intLists["dilations"] = {1, 1};
  Graph g = importOnnxBytes(onnxModelBytes({pool}, {onnxInput("x", {1, 1, 2, 2})}, {onnxOutput("y", 4)}, {}, 19, 10), "pool1.onnx");
  auto y = interpretGraph(g, {{"x", floatTensor({1, 1, 2, 2}, {1, 2, 3, 6})}})[0];
  EXPECT_EQ(floatValues(y), (std::vector<float>{3}));
}

}  // namespace
