/// The model zoo's construction kit (internal to the zoo): a graph under construction in one
/// layout, with the layers classic networks are made of — convolution, batch norm,
/// activations, pooling, dense layers — each creating its parameters. Weights are drawn in
/// torch's shapes and order (OIHW convolutions, [out, in] dense layers) and permuted for NHWC,
/// so that the two layouts of a network compute the same function. Parameter values are
/// deterministic pseudo-random, seeded by the parameter's name (layer order does not matter).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/ModelZoo.h"

namespace tessel::graph {

/// One convolution layer: kernel, stride and padding as (height, width), as torch's Conv2d.
struct ConvLayer {
  int64_t out = 0;
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};  ///< symmetric: rows above and below, columns left and right
  bool depthwise = false;                ///< one group per input channel (out = in)
  bool bias = false;
};

class NetBuilder {
 public:
  explicit NetBuilder(const ModelOptions& options);

  Graph& graph() { return graph_; }
  const ModelOptions& options() const { return options_; }
  bool nhwc() const { return options_.layout == ops::Layout::NHWC; }
  const char* layoutName() const { return ops::layoutName(options_.layout); }
  int channelAxis() const { return nhwc() ? 3 : 1; }
  int64_t channels(int x) const;
  /// Rows and columns of an image node.
  std::array<int64_t, 2> spatial(int x) const;

  /// The image input "data": batch x 3 x size x size in the builder's layout.
  int input(int64_t channels, int64_t size);

  /// Uniform in [offset - limit, offset + limit].
  runtime::Tensor randomTensor(const std::string& name, std::vector<int64_t> shape, double limit, double offset = 0);
  int parameter(const std::string& name, std::vector<int64_t> shape, double limit, double offset = 0);

  /// A convolution named `name`, weight "<name>_weight" (and "<name>_bias" with a bias),
  /// He-uniform so that activations keep their scale through ReLU networks.
  int conv(int x, const ConvLayer& layer, const std::string& name);
  /// A square convolution without bias.
  int conv(int x, int64_t out, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool depthwise = false);
  /// Inference batch norm "<name>" with parameters <name>_gamma/_beta/_moving_mean/_moving_var.
  int batchNorm(int x, const std::string& name, double epsilon = 1e-5);
  int relu(int x, const std::string& name);
  int relu6(int x, const std::string& name);
  /// conv (<name>_conv) + batch norm (<name>_bn) + relu (<name>_relu).
  int convBnRelu(int x, int64_t out, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool depthwise = false);

  int maxPool(int x, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool ceilMode = false);
  /// Average pooling; `countIncludePad` as torch (its default is true).
  int avgPool(int x, int64_t kernel, int64_t stride, int64_t pad, const std::string& name, bool countIncludePad = true);
  int adaptiveAvgPool(int x, std::array<int64_t, 2> outputSize, const std::string& name);
  int globalAvgPool(int x, const std::string& name);
  /// Concatenation along the channel axis, in the given order (torch.cat(..., 1)).
  int concatChannels(const std::vector<int>& xs, const std::string& name);

  /// torch.flatten(x, 1) then nn.Linear: weight "<name>_weight" [units, features] and bias
  /// "<name>_bias". For an NHWC image with more than one pixel the weight's columns are
  /// permuted from torch's (c, h, w) order to NHWC's (h, w, c), so both layouts agree.
  int flattenDense(int x, int64_t units, const std::string& name);
  /// nn.Linear on a 2-D node.
  int dense(int x, int64_t units, const std::string& name);
  /// The network's end: softmax over the classes, marked as the graph's output.
  Graph finish(int logits);

  /// out has dimension k = w's dimension axes[k] (a 4-D transpose).
  static runtime::Tensor permute(const runtime::Tensor& w, std::array<int, 4> axes);

 private:
  ModelOptions options_;
  Graph graph_;
};

}  // namespace tessel::graph
