// Graph packing for a GEMM accelerator, as TVM's graph_pack
// (tvm@v0.18.0:vta/python/vta/top/graphpack.py): between a start and a stop operator,
// activations live in NCHW{b}n{c}c and convolution weights in OIHW{c}o{c}i, channels padded
// to the block.
#include <fmt/format.h>

#include <cstring>

#include "graph/passes/GraphPasses.h"
#include "graph/passes/GraphRewriter.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

int64_t roundUp(int64_t n, int64_t block) { return (n + block - 1) / block * block; }

size_t elementBytes(const runtime::Tensor& t) { return t.nbytes() / size_t(std::max<int64_t>(t.numel(), 1)); }

/// The packed copy of a constant: its two leading axes padded with zeros to multiples of the
/// blocks, then viewed as [d0 / b0, b0, d1 / b1, b1, rest...] and transposed to
/// [d0 / b0, d1 / b1, rest..., b0, b1]. For an OIHW weight with blocks (c, c): OIHW{c}o{c}i.
runtime::Tensor packConstant(const runtime::Tensor& value, std::array<int64_t, 2> blocks) {
  const std::vector<int64_t>& shape = value.shape();
  std::vector<int64_t> padded = shape;
  padded[0] = roundUp(shape[0], blocks[0]);
  padded[1] = roundUp(shape[1], blocks[1]);
  int64_t inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  std::vector<int64_t> packedShape{padded[0] / blocks[0], padded[1] / blocks[1]};
  for (size_t d = 2; d < shape.size(); ++d) packedShape.push_back(shape[d]);
  packedShape.push_back(blocks[0]);
  packedShape.push_back(blocks[1]);
  auto packed = runtime::Tensor::empty(packedShape, value.dtype());
  size_t element = elementBytes(value);
  auto* dst = static_cast<uint8_t*>(packed.data());
  const auto* src = static_cast<const uint8_t*>(value.data());
  std::memset(dst, 0, packed.nbytes());
  for (int64_t a = 0; a < shape[0]; ++a)
    for (int64_t b = 0; b < shape[1]; ++b)
      for (int64_t r = 0; r < inner; ++r) {
        int64_t to = ((((a / blocks[0]) * packedShape[1] + b / blocks[1]) * inner + r) * blocks[0] + a % blocks[0]) * blocks[1] +
                     b % blocks[1];
        std::memcpy(dst + size_t(to) * element, src + size_t((a * shape[1] + b) * inner + r) * element, element);
      }
  return packed;
}

/// A per-channel constant's values in order, zero-padded to a multiple of the block, as
/// [C / c, 1, 1, 1, c]: it broadcasts against NCHW{b}n{c}c as [C, 1, 1] does against NCHW.
runtime::Tensor packPerChannel(const runtime::Tensor& value, int64_t block) {
  auto packed = runtime::Tensor::empty({roundUp(value.numel(), block) / block, 1, 1, 1, block}, value.dtype());
  std::memset(packed.data(), 0, packed.nbytes());
  std::memcpy(packed.data(), value.data(), value.nbytes());
  return packed;
}

/// The node of the `index`-th operator `op` (0: the first); Error naming both otherwise.
int findOccurrence(const Graph& graph, const OperatorOccurrence& at, const char* role) {
  int seen = 0;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    if (n.kind == NodeKind::Op && n.op == at.op && seen++ == at.index) return int(i);
  }
  if (seen == 0) fail("graph pack: the {} operator '{}' is not in the graph", role, at.op);
  fail("graph pack: the {} operator '{}' index {} asked for, but the graph has {} of them (indices 0 to {})", role, at.op,
       at.index, seen, seen - 1);
}

class GraphPacker {
 public:
  GraphPacker(const Graph& graph, const GraphPackOptions& options)
      : graph_(graph), options_(options), rw_(graph), packed_(graph.nodes().size(), -1), unpacked_(graph.nodes().size(), -1) {}

  Graph run() {
    int start = findOccurrence(graph_, options_.start, "start");
    int stop = findOccurrence(graph_, options_.stop, "stop");
    TESSEL_CHECK(start < stop, "graph pack: the stop operator '{}' (node '{}') comes before the start operator '{}' (node '{}')",
                 options_.stop.op, graph_.node(stop).name, options_.start.op, graph_.node(start).name);
    for (size_t i = 0; i < graph_.nodes().size(); ++i) {
      const Node& n = graph_.nodes()[i];
      if (n.kind != NodeKind::Op) continue;
      int id = int(i);
      bool inside = id > start && id < stop;
      bool readsPacked = false;
      for (int in : n.inputs) readsPacked = readsPacked || packed_[size_t(in)] >= 0;
      if (inside && readsPacked) {
        try {
          packNode(id);
        } catch (const Error& e) {
          throw e.withContext("graph pack: node '" + n.name + "' (" + n.op + ")");
        }
        continue;
      }
      std::vector<int> inputs;
      for (int in : n.inputs) inputs.push_back(original(in));
      rw_.setMapping(id, rw_.graph().addOp(n.op, inputs, n.attrs, n.name));
      if (id == start) {
        // Readers outside the region keep reading the start operator's own value.
        unpacked_[size_t(id)] = rw_.mapped(id);
        packed_[size_t(id)] = pack(id);
      }
    }
    for (int o : graph_.outputs()) rw_.setMapping(o, original(o));
    return rw_.finish();
  }

 private:
  Graph& out() { return rw_.graph(); }
  int op(const std::string& name, std::vector<int> inputs, Attrs attrs, const std::string& base) {
    return out().addOp(name, std::move(inputs), std::move(attrs), rw_.freshName(base));
  }
  int64_t channelBlock() const { return options_.channelBlock; }

  /// Old value `id` (NCHW) packed to NCHW{b}n{c}c: channels padded with zeros to the block,
  /// reshaped to [N / b, b, C / c, c, H, W] and transposed to [N / b, C / c, H, W, b, c].
  int pack(int id) {
    const Node& n = graph_.node(id);
    const auto& s = n.type.shape;
    TESSEL_CHECK(s.size() == 4, "graph pack: value '{}' {} is not a 4-D NCHW image", n.name, n.type.str());
    int64_t b = options_.batchBlock, c = channelBlock();
    TESSEL_CHECK(s[0] % b == 0, "graph pack: the batch {} of value '{}' is not a multiple of the batch block {}", s[0], n.name, b);
    int x = original(id);
    int64_t channels = roundUp(s[1], c);
    if (channels != s[1])
      x = op("pad", {x}, {{"before", {0, 0, 0, 0}}, {"after", {0, channels - s[1], 0, 0}}, {"value", 0.0}}, n.name + "_channels_padded");
    x = op("reshape", {x}, {{"shape", {s[0] / b, b, channels / c, c, s[2], s[3]}}}, n.name + "_blocks");
    return op("transpose", {x}, {{"axes", {0, 2, 4, 5, 1, 3}}}, n.name + "_packed");
  }

  /// Old value `id` in its own layout: itself, or its packed value brought back (once).
  int original(int id) {
    if (packed_[size_t(id)] < 0) return rw_.mapped(id);
    int& u = unpacked_[size_t(id)];
    if (u >= 0) return u;
    const Node& n = graph_.node(id);
    const auto& s = n.type.shape;
    int64_t channels = roundUp(s[1], channelBlock());
    int x = op("transpose", {packed_[size_t(id)]}, {{"axes", {0, 4, 1, 5, 2, 3}}}, n.name + "_unpacked_blocks");
    x = op("reshape", {x}, {{"shape", {s[0], channels, s[2], s[3]}}}, n.name + "_unpacked");
    if (channels != s[1])
      x = op("strided_slice", {x}, {{"begin", {0, 0, 0, 0}}, {"step", {1, 1, 1, 1}}, {"shape", s}}, n.name + "_unpadded");
    return u = x;
  }

  /// An operand of a broadcast operator inside the region, in the packed layout: packed
  /// values as they are, scalars as they are, per-channel constants ([C, 1, 1] and the like)
  /// packed to [C / c, 1, 1, 1, c], other images packed.
  int packedOperand(int id) {
    if (packed_[size_t(id)] >= 0) return packed_[size_t(id)];
    const Node& n = graph_.node(id);
    const auto& s = n.type.shape;
    int64_t numel = 1;
    for (int64_t d : s) numel *= d;
    if (numel == 1) return rw_.mapped(id);
    if (const runtime::Tensor* value = constantValue(graph_, id)) {
      // Aligned to NCHW from the right, only the channel axis may differ from 1.
      bool perChannel = s.size() >= 3 && s.size() <= 4;
      for (size_t d = 0; perChannel && d < s.size(); ++d) perChannel = d == s.size() - 3 || s[d] == 1;
      TESSEL_CHECK(perChannel, "graph pack: constant '{}' {} is neither a scalar nor per channel", n.name, n.type.str());
      return out().addConstant(rw_.freshName(n.name + "_packed"), packPerChannel(*value, channelBlock()));
    }
    return pack(id);
  }

  void packNode(int id) {
    const Node& n = graph_.node(id);
    const OpDef& def = lookupOp(n.op);
    int result;
    if (n.op == "conv2d") {
      result = packConvolution(id);
    } else if (def.pattern == OpPattern::ElemWise && n.inputs.size() == 1) {
      result = out().addOp(n.op, {packed_[size_t(n.inputs[0])]}, n.attrs, n.name);
    } else if (n.op == "bias_add") {
      result = packBiasAdd(id);
    } else if (def.pattern == OpPattern::Broadcast && n.inputs.size() == 2) {
      result = out().addOp(n.op, {packedOperand(n.inputs[0]), packedOperand(n.inputs[1])}, n.attrs, n.name);
    } else {
      fail("operator '{}' between the start '{}' and the stop '{}' has no packed form", n.op, options_.start.op,
           options_.stop.op);
    }
    rw_.setMapping(id, result);
    packed_[size_t(id)] = result;
  }

  /// bias_add along NCHW's channels becomes an add of the packed bias (as graph_pack does).
  int packBiasAdd(int id) {
    const Node& n = graph_.node(id);
    int axis = n.attrs.value("axis", 1);
    TESSEL_CHECK(axis == 1 || axis == -3, "only a bias along the channels (axis 1) is packed, this one is along axis {}", axis);
    const runtime::Tensor* bias = constantValue(graph_, n.inputs[1]);
    TESSEL_CHECK(bias, "its bias '{}' is not a constant", graph_.node(n.inputs[1]).name);
    int biasId = out().addConstant(rw_.freshName(graph_.node(n.inputs[1]).name + "_packed"), packPerChannel(*bias, channelBlock()));
    return out().addOp("add", {packed_[size_t(n.inputs[0])], biasId}, Attrs::object(), n.name);
  }

  int packConvolution(int id) {
    const Node& n = graph_.node(id);
    TESSEL_CHECK(n.attrs.value("layout", std::string("NCHW")) == "NCHW", "only NCHW convolutions are packed, this one is {}",
                 n.attrs.value("layout", std::string("NCHW")));
    const runtime::Tensor* weight = constantValue(graph_, n.inputs[1]);
    TESSEL_CHECK(weight, "its weight '{}' is not a constant", graph_.node(n.inputs[1]).name);
    int64_t c = channelBlock();
    TESSEL_CHECK(weight->ndim() == 4, "its weight '{}' is not OIHW", graph_.node(n.inputs[1]).name);
    runtime::Tensor packed = packConstant(*weight, {c, c});
    int weightId = out().addConstant(rw_.freshName(graph_.node(n.inputs[1]).name + "_packed"), std::move(packed));
    Attrs attrs = n.attrs;
    attrs.erase("layout");
    return out().addOp("conv2d_blocked", {packedOperand(n.inputs[0]), weightId}, attrs, n.name);
  }

  const Graph& graph_;
  const GraphPackOptions& options_;
  GraphRewriter rw_;
  std::vector<int> packed_;    // per old node: its packed value in the new graph, or -1
  std::vector<int> unpacked_;  // per old packed node: its value brought back to NCHW, or -1
};

}  // namespace

OperatorOccurrence parseOperatorOccurrence(const std::string& text) {
  OperatorOccurrence at;
  auto colon = text.find(':');
  at.op = text.substr(0, colon);
  TESSEL_CHECK(!at.op.empty(), "operator '{}': the name is empty (NAME or NAME:INDEX)", text);
  if (colon != std::string::npos) {
    std::string index = text.substr(colon + 1);
    TESSEL_CHECK(!index.empty() && index.size() < 9 && index.find_first_not_of("0123456789") == std::string::npos,
                 "operator '{}': '{}' is not an index (NAME or NAME:INDEX, INDEX counting from 0)", text, index);
    at.index = std::stoi(index);
  }
  TESSEL_CHECK(isRegisteredOp(at.op), "operator '{}': no operator is named '{}'", text, at.op);
  return at;
}

void GraphPackOptions::validate() const {
  TESSEL_CHECK(batchBlock >= 1 && channelBlock >= 1, "graph pack: blocks must be positive, got batch {} and channels {}",
               batchBlock, channelBlock);
}

Graph graphPack(const Graph& graph, const GraphPackOptions& options) {
  options.validate();
  return GraphPacker(graph, options).run();
}

}  // namespace tessel::graph
