// The transformers of the zoo: BERT-base, GPT-2 small and ViT-B/16, layer for layer as
// bench/peers/transformers.py writes them after the references (transformers' modeling_bert.py
// and modeling_gpt2.py; Dosovitskiy et al. 2021 for ViT), with the same parameter names and
// shapes as that module's state dict, so a params file of its weights makes the same function.
//
// The graph is built of what an ONNX export of those modules imports as: a linear layer is a
// product by the transposed weight (folded at build time) and a bias add, the heads a reshape
// and a transpose, the attention scores a batched product scaled by 1/sqrt(head size), so that
// both reach the same graph passes and schedules.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

#include "graph/NetBuilder.h"
#include "graph/ZooNetworks.h"
#include "support/Error.h"

namespace tessel::graph::zoo {

namespace {

/// The size of one transformer: what bench/peers/transformers.py's CONFIGS say.
struct TransformerShape {
  int64_t layers = 12, hidden = 768, heads = 12, ffn = 3072;
};

/// The references initialize weights normal with standard deviation 0.02; a uniform draw of the
/// same deviation keeps the activations' scale.
constexpr double kWeightLimit = 0.02 * 1.7320508075688772;  // 0.02 * sqrt(3)

/// The layers of a transformer on (batch, tokens, hidden) values, parameters named as the
/// PyTorch modules' state dict ("blocks.0.attention.query.weight").
class TransformerKit {
 public:
  TransformerKit(NetBuilder& b, TransformerShape shape) : b_(b), g_(b.graph()), shape_(shape) {}

  Graph& graph() { return g_; }
  const std::vector<int64_t>& shapeOf(int x) const { return g_.node(x).type.shape; }

  /// nn.Linear over the last axis: weight [out, in] as torch stores it, transposed once (the
  /// build folds it), then the bias.
  int linear(int x, int64_t out, const std::string& name) {
    int64_t in = shapeOf(x).back();
    int weight = b_.parameter(name + ".weight", {out, in}, kWeightLimit);
    int transposed = g_.addOp("transpose", {weight}, {{"axes", {1, 0}}}, name + ".weight_t");
    int product = g_.addOp("batch_matmul", {x, transposed}, Attrs::object(), name);
    int bias = b_.parameter(name + ".bias", {out}, kWeightLimit);
    return g_.addOp("add", {product, bias}, Attrs::object(), name + ".bias_add");
  }

  /// nn.LayerNorm over the hidden axis (weight near one, bias near zero).
  int layerNorm(int x, double epsilon, const std::string& name) {
    int64_t hidden = shapeOf(x).back();
    int gamma = b_.parameter(name + ".weight", {hidden}, 0.1, 1.0);
    int beta = b_.parameter(name + ".bias", {hidden}, 0.1);
    return g_.addOp("layer_norm", {x, gamma, beta}, {{"axis", -1}, {"epsilon", epsilon}}, name);
  }

  int gelu(int x, bool tanhApproximation, const std::string& name) {
    return g_.addOp("gelu", {x}, {{"approximate", tanhApproximation ? "tanh" : "none"}}, name);
  }

  /// nn.Embedding: rows of the table [rows, hidden] picked by `indices`.
  int embedding(int indices, int64_t rows, const std::string& name) {
    int table = b_.parameter(name + ".weight", {rows, shape_.hidden}, kWeightLimit);
    return g_.addOp("take", {table, indices}, {{"axis", 0}}, name);
  }

  /// A constant int64 [1, tokens] tensor: 0, 1, ... (positions) or all `fill` (token types).
  int tokenIndices(int64_t tokens, std::optional<int64_t> fill, const std::string& name) {
    auto t = runtime::Tensor::empty({1, tokens}, DataType::int64());
    for (int64_t i = 0; i < tokens; ++i) t.dataAs<int64_t>()[i] = fill ? *fill : i;
    return g_.addFixedConstant(name, t);
  }

  /// The token ids input "input_ids" [batch, tokens] and the sum of their embeddings in the
  /// `word` table and of the positions 0, 1, ... in the `position` table.
  int tokenEmbeddings(int64_t batch, int64_t tokens, int64_t vocabulary, int64_t positions, const std::string& word,
                      const std::string& position) {
    int ids = g_.addInput("input_ids", {{batch, tokens}, DataType::int64()});
    int words = embedding(ids, vocabulary, word);
    int places = embedding(tokenIndices(tokens, std::nullopt, "position_ids"), positions, position);
    return g_.addOp("add", {words, places}, Attrs::object(), "embedding_sum");
  }

  /// Multi-head self-attention (transformers.py's SelfAttention): query, key and value as three
  /// projections or one of three times the width sliced in three (GPT-2's c_attn); scores scaled
  /// by 1/sqrt(head size), a causal mask against float's lowest value where asked, softmax over
  /// the keys, the heads merged and projected.
  int attention(int x, bool fusedQkv, bool causal, const std::string& name) {
    const auto shape = shapeOf(x);
    const int64_t batch = shape[0], tokens = shape[1], hidden = shape_.hidden, heads = shape_.heads;
    const int64_t headSize = hidden / heads;
    int q, k, v;
    if (fusedQkv) {
      int qkv = linear(x, 3 * hidden, name + ".qkv");
      auto part = [&](int64_t i) {
        return g_.addOp("strided_slice", {qkv},
                        {{"begin", {0, 0, i * hidden}}, {"shape", {batch, tokens, hidden}}, {"step", {1, 1, 1}}},
                        fmt::format("{}.qkv.part{}", name, i));
      };
      q = part(0), k = part(1), v = part(2);
    } else {
      q = linear(x, hidden, name + ".query");
      k = linear(x, hidden, name + ".key");
      v = linear(x, hidden, name + ".value");
    }
    // [batch, tokens, hidden] -> [batch, heads, tokens, head size] (the key as its transpose,
    // [batch, heads, head size, tokens], which the exporters write as one permutation).
    auto heads4 = [&](int y, std::vector<int64_t> axes, const char* what) {
      int split = g_.addOp("reshape", {y}, {{"shape", {batch, tokens, heads, headSize}}}, name + "." + what + "_heads");
      return g_.addOp("transpose", {split}, {{"axes", axes}}, name + "." + what + "_transpose");
    };
    q = heads4(q, {0, 2, 1, 3}, "query");
    k = heads4(k, {0, 2, 3, 1}, "key");
    v = heads4(v, {0, 2, 1, 3}, "value");
    int scores = g_.addOp("batch_matmul", {q, k}, Attrs::object(), name + ".scores");
    auto scale = runtime::Tensor::empty({}, DataType::float32());
    scale.dataAs<float>()[0] = float(std::sqrt(double(headSize)));
    scores = g_.addOp("divide", {scores, g_.addFixedConstant(name + ".scale", scale)}, Attrs::object(), name + ".scaled");
    if (causal) {
      auto mask = runtime::Tensor::empty({1, 1, tokens, tokens}, DataType::boolean());
      for (int64_t i = 0; i < tokens; ++i)
        for (int64_t j = 0; j < tokens; ++j) mask.dataAs<bool>()[i * tokens + j] = j <= i;
      auto lowest = runtime::Tensor::empty({}, DataType::float32());
      lowest.dataAs<float>()[0] = std::numeric_limits<float>::lowest();
      scores = g_.addOp("where", {g_.addFixedConstant(name + ".causal", mask), scores, g_.addFixedConstant(name + ".lowest", lowest)},
                        Attrs::object(), name + ".masked");
    }
    int probabilities = g_.addOp("softmax", {scores}, {{"axis", 3}}, name + ".softmax");
    int context = g_.addOp("batch_matmul", {probabilities, v}, Attrs::object(), name + ".context");
    context = g_.addOp("transpose", {context}, {{"axes", {0, 2, 1, 3}}}, name + ".context_transpose");
    context = g_.addOp("reshape", {context}, {{"shape", {batch, tokens, hidden}}}, name + ".context_merged");
    return linear(context, hidden, name + ".out");
  }

  /// GPT-2's and ViT's block: x + attention(norm1(x)), then x + proj(gelu(fc(norm2(x)))).
  int preNormBlock(int x, double epsilon, bool tanhGelu, bool fusedQkv, bool causal, const std::string& name) {
    int a = attention(layerNorm(x, epsilon, name + ".norm1"), fusedQkv, causal, name + ".attention");
    x = g_.addOp("add", {x, a}, Attrs::object(), name + ".attention_residual");
    int h = linear(layerNorm(x, epsilon, name + ".norm2"), shape_.ffn, name + ".fc");
    h = linear(gelu(h, tanhGelu, name + ".gelu"), shape_.hidden, name + ".proj");
    return g_.addOp("add", {x, h}, Attrs::object(), name + ".mlp_residual");
  }

  /// BERT's layer: norm(x + attention(x)), then norm(x + output(gelu(intermediate(x)))).
  int postNormLayer(int x, const std::string& name) {
    constexpr double kEpsilon = 1e-12;
    int a = attention(x, false, false, name + ".attention");
    x = layerNorm(g_.addOp("add", {x, a}, Attrs::object(), name + ".attention_residual"), kEpsilon, name + ".attention_norm");
    int h = linear(x, shape_.ffn, name + ".intermediate");
    h = linear(gelu(h, false, name + ".gelu"), shape_.hidden, name + ".output");
    return layerNorm(g_.addOp("add", {x, h}, Attrs::object(), name + ".output_residual"), kEpsilon, name + ".output_norm");
  }

 private:
  NetBuilder& b_;
  Graph& g_;
  TransformerShape shape_;
};

TransformerShape shapeFor(const ModelOptions& o) {
  TransformerShape s;
  if (o.layers > 0) s.layers = o.layers;
  return s;
}

/// The token count of BERT or GPT-2: options.sequence or 128; an error beyond the position table.
int64_t tokensFor(const std::string& network, const ModelOptions& o, int64_t positions) {
  int64_t tokens = o.sequence > 0 ? o.sequence : 128;
  TESSEL_CHECK(tokens <= positions, "{}: sequence {} is longer than its {} positions", network, tokens, positions);
  return tokens;
}

}  // namespace

Graph bertBase(const ModelOptions& o) {
  constexpr int64_t kVocab = 30522, kPositions = 512, kTokenTypes = 2;
  const int64_t tokens = tokensFor("bert-base", o, kPositions);
  const TransformerShape shape = shapeFor(o);
  NetBuilder b(o);
  TransformerKit kit(b, shape);
  Graph& g = kit.graph();
  // word + position + token type (all type 0, as BertModel without token_type_ids).
  int x = kit.tokenEmbeddings(o.batch, tokens, kVocab, kPositions, "word", "position");
  x = g.addOp("add", {x, kit.embedding(kit.tokenIndices(tokens, 0, "token_type_ids"), kTokenTypes, "token_type")},
              Attrs::object(), "embedding_types");
  x = kit.layerNorm(x, 1e-12, "embedding_norm");
  for (int64_t i = 0; i < shape.layers; ++i) x = kit.postNormLayer(x, fmt::format("layers.{}", i));
  g.markOutput(x);
  return std::move(g);
}

Graph gpt2Small(const ModelOptions& o) {
  constexpr int64_t kVocab = 50257, kPositions = 1024;
  const int64_t tokens = tokensFor("gpt2", o, kPositions);
  const TransformerShape shape = shapeFor(o);
  NetBuilder b(o);
  TransformerKit kit(b, shape);
  Graph& g = kit.graph();
  int x = kit.tokenEmbeddings(o.batch, tokens, kVocab, kPositions, "wte", "wpe");
  for (int64_t i = 0; i < shape.layers; ++i)
    x = kit.preNormBlock(x, 1e-5, /*tanhGelu=*/true, /*fusedQkv=*/true, /*causal=*/true, fmt::format("blocks.{}", i));
  g.markOutput(kit.layerNorm(x, 1e-5, "norm"));
  return std::move(g);
}

Graph vitB16(const ModelOptions& o) {
  constexpr int64_t kPatch = 16;
  const TransformerShape shape = shapeFor(o);
  const int64_t size = imageSize("vit-b16", o, 224, kPatch);
  TESSEL_CHECK(size % kPatch == 0, "vit-b16: image size {} is not a multiple of the {}-pixel patch", size, kPatch);
  const int64_t grid = size / kPatch, patches = grid * grid, tokens = patches + 1;
  NetBuilder b(o);
  TransformerKit kit(b, shape);
  Graph& g = kit.graph();
  const bool nhwc = b.nhwc();
  std::vector<int64_t> inputShape = nhwc ? std::vector<int64_t>{o.batch, size, size, 3} : std::vector<int64_t>{o.batch, 3, size, size};
  int pixels = g.addInput("pixel_values", {inputShape, DataType::float32()});
  // The patch embedding: a 16x16 stride-16 convolution to the hidden width, with bias; its
  // weight drawn in torch's OIHW and stored HWIO for NHWC (NetBuilder's convention).
  runtime::Tensor weight = b.randomTensor("patch.weight", {shape.hidden, 3, kPatch, kPatch}, kWeightLimit);
  if (nhwc) weight = NetBuilder::permute(weight, {2, 3, 1, 0});
  int conv = g.addOp("conv2d", {pixels, g.addConstant("patch.weight", weight)},
                     {{"strides", {kPatch, kPatch}}, {"padding", {0, 0, 0, 0}}, {"layout", b.layoutName()}}, "patch");
  int x = g.addOp("bias_add", {conv, b.parameter("patch.bias", {shape.hidden}, kWeightLimit)}, {{"axis", b.channelAxis()}},
                  "patch.bias_add");
  // flatten(2).transpose(1, 2): [batch, patches, hidden] (NHWC's pixels are already in that order).
  if (nhwc) {
    x = g.addOp("reshape", {x}, {{"shape", {o.batch, patches, shape.hidden}}}, "patch_tokens");
  } else {
    x = g.addOp("reshape", {x}, {{"shape", {o.batch, shape.hidden, patches}}}, "patch_flatten");
    x = g.addOp("transpose", {x}, {{"axes", {0, 2, 1}}}, "patch_tokens");
  }
  int cls = b.parameter("cls_token", {1, 1, shape.hidden}, kWeightLimit);
  if (o.batch > 1) cls = g.addOp("broadcast_to", {cls}, {{"shape", {o.batch, 1, shape.hidden}}}, "cls_tokens");
  x = g.addOp("concatenate", {cls, x}, {{"axis", 1}}, "tokens");
  x = g.addOp("add", {x, b.parameter("position", {1, tokens, shape.hidden}, kWeightLimit)}, Attrs::object(), "positioned");
  for (int64_t i = 0; i < shape.layers; ++i)
    x = kit.preNormBlock(x, 1e-6, /*tanhGelu=*/false, /*fusedQkv=*/false, /*causal=*/false, fmt::format("blocks.{}", i));
  x = kit.layerNorm(x, 1e-6, "norm");
  // The class token's row: x[:, 0].
  x = g.addOp("strided_slice", {x}, {{"begin", {0, 0, 0}}, {"shape", {o.batch, 1, shape.hidden}}, {"step", {1, 1, 1}}},
              "class_token");
  x = g.addOp("reshape", {x}, {{"shape", {o.batch, shape.hidden}}}, "class_features");
  int head = g.addOp("dense", {x, b.parameter("head.weight", {o.classes, shape.hidden}, kWeightLimit)}, Attrs::object(), "head");
  g.markOutput(g.addOp("bias_add", {head, b.parameter("head.bias", {o.classes}, kWeightLimit)}, {{"axis", -1}}, "head.bias_add"));
  return std::move(g);
}

}  // namespace tessel::graph::zoo
