// torchvision's inception_v3 in eval mode: the auxiliary classifier is not computed (it only
// runs in training), transform_input=False. Every convolution is BasicConv2d: conv without
// bias, batch norm with epsilon 0.001, relu. Branches concatenate in torchvision's order.
#include <fmt/format.h>

#include "graph/NetBuilder.h"
#include "graph/ZooNetworks.h"

namespace tessel::graph::zoo {

namespace {

/// Names follow torchvision's modules ("Mixed_5b_branch5x5_1"), parameters add _conv / _bn.
class InceptionBuilder {
 public:
  explicit InceptionBuilder(NetBuilder& b) : b_(b) {}

  int basic(int x, int64_t out, std::array<int64_t, 2> kernel, const std::string& name, int64_t stride = 1,
            std::array<int64_t, 2> padding = {0, 0}) {
    int y = b_.conv(x, ConvLayer{out, kernel, {stride, stride}, padding, false, false}, name + "_conv");
    return b_.relu(b_.batchNorm(y, name + "_bn", 0.001), name + "_relu");
  }
  int basic(int x, int64_t out, int64_t kernel, const std::string& name, int64_t stride = 1, int64_t pad = 0) {
    return basic(x, out, {kernel, kernel}, name, stride, {pad, pad});
  }
  /// F.avg_pool2d(x, 3, stride=1, padding=1): count_include_pad is torch's default, true.
  int avgPool3x3(int x, const std::string& name) { return b_.avgPool(x, 3, 1, 1, name, true); }

  int inceptionA(int x, int64_t poolFeatures, const std::string& n) {
    int b1 = basic(x, 64, 1, n + "_branch1x1");
    int b5 = basic(basic(x, 48, 1, n + "_branch5x5_1"), 64, 5, n + "_branch5x5_2", 1, 2);
    int b3 = basic(x, 64, 1, n + "_branch3x3dbl_1");
    b3 = basic(b3, 96, 3, n + "_branch3x3dbl_2", 1, 1);
    b3 = basic(b3, 96, 3, n + "_branch3x3dbl_3", 1, 1);
    int bp = basic(avgPool3x3(x, n + "_avg_pool"), poolFeatures, 1, n + "_branch_pool");
    return b_.concatChannels({b1, b5, b3, bp}, n + "_concat");
  }

  int inceptionB(int x, const std::string& n) {
    int b3 = basic(x, 384, 3, n + "_branch3x3", 2);
    int bd = basic(x, 64, 1, n + "_branch3x3dbl_1");
    bd = basic(bd, 96, 3, n + "_branch3x3dbl_2", 1, 1);
    bd = basic(bd, 96, 3, n + "_branch3x3dbl_3", 2);
    int bp = b_.maxPool(x, 3, 2, 0, n + "_max_pool");
    return b_.concatChannels({b3, bd, bp}, n + "_concat");
  }

  int inceptionC(int x, int64_t c7, const std::string& n) {
    int b1 = basic(x, 192, 1, n + "_branch1x1");
    int b7 = basic(x, c7, 1, n + "_branch7x7_1");
    b7 = basic(b7, c7, {1, 7}, n + "_branch7x7_2", 1, {0, 3});
    b7 = basic(b7, 192, {7, 1}, n + "_branch7x7_3", 1, {3, 0});
    int bd = basic(x, c7, 1, n + "_branch7x7dbl_1");
    bd = basic(bd, c7, {7, 1}, n + "_branch7x7dbl_2", 1, {3, 0});
    bd = basic(bd, c7, {1, 7}, n + "_branch7x7dbl_3", 1, {0, 3});
    bd = basic(bd, c7, {7, 1}, n + "_branch7x7dbl_4", 1, {3, 0});
    bd = basic(bd, 192, {1, 7}, n + "_branch7x7dbl_5", 1, {0, 3});
    int bp = basic(avgPool3x3(x, n + "_avg_pool"), 192, 1, n + "_branch_pool");
    return b_.concatChannels({b1, b7, bd, bp}, n + "_concat");
  }

  int inceptionD(int x, const std::string& n) {
    int b3 = basic(basic(x, 192, 1, n + "_branch3x3_1"), 320, 3, n + "_branch3x3_2", 2);
    int b7 = basic(x, 192, 1, n + "_branch7x7x3_1");
    b7 = basic(b7, 192, {1, 7}, n + "_branch7x7x3_2", 1, {0, 3});
    b7 = basic(b7, 192, {7, 1}, n + "_branch7x7x3_3", 1, {3, 0});
    b7 = basic(b7, 192, 3, n + "_branch7x7x3_4", 2);
    int bp = b_.maxPool(x, 3, 2, 0, n + "_max_pool");
    return b_.concatChannels({b3, b7, bp}, n + "_concat");
  }

  int inceptionE(int x, const std::string& n) {
    int b1 = basic(x, 320, 1, n + "_branch1x1");
    int b3 = basic(x, 384, 1, n + "_branch3x3_1");
    int b3a = basic(b3, 384, {1, 3}, n + "_branch3x3_2a", 1, {0, 1});
    int b3b = basic(b3, 384, {3, 1}, n + "_branch3x3_2b", 1, {1, 0});
    int bd = basic(x, 448, 1, n + "_branch3x3dbl_1");
    bd = basic(bd, 384, 3, n + "_branch3x3dbl_2", 1, 1);
    int bda = basic(bd, 384, {1, 3}, n + "_branch3x3dbl_3a", 1, {0, 1});
    int bdb = basic(bd, 384, {3, 1}, n + "_branch3x3dbl_3b", 1, {1, 0});
    int bp = basic(avgPool3x3(x, n + "_avg_pool"), 192, 1, n + "_branch_pool");
    // torchvision concatenates the two halves of each split branch first: the same order.
    return b_.concatChannels({b1, b3a, b3b, bda, bdb, bp}, n + "_concat");
  }

 private:
  NetBuilder& b_;
};

}  // namespace

Graph inceptionV3(const ModelOptions& o) {
  NetBuilder b(o);
  InceptionBuilder i(b);
  int x = b.input(3, imageSize("inception_v3", o, 299, 75));
  x = i.basic(x, 32, 3, "Conv2d_1a_3x3", 2);
  x = i.basic(x, 32, 3, "Conv2d_2a_3x3");
  x = i.basic(x, 64, 3, "Conv2d_2b_3x3", 1, 1);
  x = b.maxPool(x, 3, 2, 0, "maxpool1");
  x = i.basic(x, 80, 1, "Conv2d_3b_1x1");
  x = i.basic(x, 192, 3, "Conv2d_4a_3x3");
  x = b.maxPool(x, 3, 2, 0, "maxpool2");
  x = i.inceptionA(x, 32, "Mixed_5b");
  x = i.inceptionA(x, 64, "Mixed_5c");
  x = i.inceptionA(x, 64, "Mixed_5d");
  x = i.inceptionB(x, "Mixed_6a");
  x = i.inceptionC(x, 128, "Mixed_6b");
  x = i.inceptionC(x, 160, "Mixed_6c");
  x = i.inceptionC(x, 160, "Mixed_6d");
  x = i.inceptionC(x, 192, "Mixed_6e");
  x = i.inceptionD(x, "Mixed_7a");
  x = i.inceptionE(x, "Mixed_7b");
  x = i.inceptionE(x, "Mixed_7c");
  x = b.globalAvgPool(x, "avgpool");
  return b.finish(b.flattenDense(x, o.classes, "fc"));
}

}  // namespace tessel::graph::zoo
