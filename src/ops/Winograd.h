/// Winograd's minimal filtering F(m x m, 3 x 3) for stride-1, undilated, ungrouped 3x3
/// convolutions, here in NHWC (NCHW, for GPUs: WinogradNchw.h) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
/// CVPR 2016). Each m x m output tile is A^T [(G g G^T) . (B^T d B)] A over an alpha x alpha
/// input tile (alpha = m + 2): alpha^2 multiplications per tile and channel pair instead of
/// 9 m^2, a quarter of the direct convolution's for m = 4.
///
/// The filter transform U = G g G^T is its own operator, so that constant folding computes it
/// once when a network is built; the convolution reads U and computes, stage by stage
/// (P = N x ceil(OH / m) x ceil(OW / m) tiles, the last ones cropped):
///   winograd_pad          [N, m tH + 2, m tW + 2, C]  the input with the padding and the tiles' overhang
///   winograd_input_rows   [alpha, alpha, P, C]   B^T applied to each tile's rows
///   winograd_input        [alpha, alpha, P, C]   ... and to its columns: V = B^T d B
///   winograd_gemm         [alpha, alpha, P, K]   M = sum over c of V[., ., p, c] U[., ., c, k]
///   winograd_output_rows  [m, alpha, P, K]       A^T M
///   conv2d_winograd_nhwc  [N, OH, OW, K]         (A^T M) A
/// Each stage's tag is its name. The transforms are sums over only the nonzero matrix entries,
/// chosen by the transform row:
/// once a schedule unrolls the row loops, each element costs a few additions.
#pragma once
#include <functional>
#include <vector>

#include "ops/Conv2d.h"
#include "te/Tensor.h"

namespace tessel::ops {

/// The transform matrices of F(m x m, 3 x 3): A^T [m][alpha], G [alpha][3], B^T [alpha][alpha].
struct WinogradMatrices {
  int m = 0, alpha = 0;
  std::vector<std::vector<double>> AT, G, BT;
};

/// The output tile sizes m there are matrices for, smallest first.
inline constexpr int kWinogradTileSizes[] = {2, 4, 6};

/// m one of kWinogradTileSizes; Error otherwise.
const WinogradMatrices& winogradMatrices(int m);

/// matrix[row] applied to term(k) (sum over k of matrix[row][k] * term(k)), the zero entries
/// left out and +-1 written as an addition or subtraction. `row` is a loop variable that a
/// schedule unrolls: the chain of selects over the rows then folds to one short sum.
ir::Expr winogradRow(const std::vector<std::vector<double>>& matrix, const ir::Expr& row, DataType type,
                     const std::function<ir::Expr(int)>& term);

/// True when conv2d with these attributes and a weight of `weightShape` (HWIO in NHWC, OIHW in
/// NCHW) is one that F(m x m, 3 x 3) computes: 3x3, stride 1, dilation 1, one group, float32.
bool winogradApplies(const Conv2dAttrs& attrs, const std::vector<int64_t>& weightShape, DataType dtype);

/// The tile size the default rules pick for a candidate convolution of C input and K output
/// channels and an output of outHeight x outWidth, given the per-core L2 cache: F(4x4) (a
/// quarter of the direct convolution's multiplications) while its transformed weight, 36 C K
/// floats, fits the L2; else F(2x2) (4/9 of them, from a weight 16/9 the direct one's) when
/// it has at least 32 tiles to reuse each weight on; else 0, direct, as below 16 channels,
/// where the transforms cost more than they save. Measured on resnet-18 (2 cores, 1 MiB L2,
/// cold weights as in the network): F(2x2) of the 14x14 layer 0.31 ms against 0.44 direct
/// (packed weights), of the 7x7 layer (16 tiles) 0.92 ms against 0.53.
int defaultWinogradTileSize(int64_t channels, int64_t outChannels, int64_t outHeight, int64_t outWidth, size_t l2Bytes);

/// The bytes of F(m x m)'s transformed float32 weight for C input and K output channels:
/// (m + 2)^2 C K floats, read once per tile batch by the GEMM stage.
double winogradWeightBytes(int m, int64_t channels, int64_t outChannels);

/// The next larger tile tuning measures beside the default rules' on CPU targets, 0 for none:
/// - 4 where the rules chose F(2x2): their L2 bound is a guess that the measurement settles. On
///   a Zen 3 (512 KiB of L2), untuned, resnet-18's 56x56x64 layers (576 KiB of F(4x4) weights)
///   took 0.80-0.87 of F(2x2)'s time as F(4x4) and its 28x28x128 ones 0.84-0.96, in profiles
///   whose unchanged kernels ran 1.2x slower in the F(4x4) run; the 14x14x256 ones 1.4x. Tuned
///   (24 trials each), layer1's two kernels took 1.19 and 0.97 ms as F(4x4) against 1.57 and
///   1.45 as F(2x2), and make demo's network 0.93x the untuned time.
/// - 6, F(6x6) (36 outputs per 64 multiplications against F(4x4)'s 16 per 36), where the rules
///   chose F(4x4) and its transformed weight, 64 C K floats, fits the L2. Tuned on resnet-18 (2
///   cores, 32 trials each): the 56x56x64 layer (1 MiB of weights) 0.382 ms as F(6x6) against
///   0.396 as F(4x4); the 28x28x128 one 0.367 against 0.349; untuned, F(6x6) is the slower one.
int largeWinogradTileSize(int64_t channels, int64_t outChannels, int64_t outHeight, int64_t outWidth, size_t l2Bytes);

/// U [alpha, alpha, C, K] = G g G^T of a 3x3 weight g: HWIO [3, 3, C, K] (the NHWC
/// convolution's, `layout` NHWC) or OIHW [K, C, 3, 3] (the NCHW one's). U has one layout for
/// both: each of its alpha^2 planes is the C x K matrix of a batched GEMM.
te::Tensor winogradWeightTransform(const te::Tensor& weight, int m, Layout layout = Layout::NHWC);

/// The same transform on a constant weight (HWIO or OIHW as `layout` says), in plain C++
/// (networks hold millions of weights).
std::vector<float> winogradWeightTransform(const std::vector<float>& weight, int64_t channels, int64_t outChannels, int m,
                                           Layout layout = Layout::NHWC);

/// The convolution of NHWC `data` with a transformed weight U [alpha, alpha, C, K]; padding
/// as in conv2d (strides and dilation must be 1). NCHW data: conv2dWinogradNCHW (WinogradNchw.h).
te::Tensor conv2dWinograd(const te::Tensor& data, const te::Tensor& transformedWeight, const Conv2dAttrs& attrs, int m);

/// The extents of a Winograd convolution of `data` (in attrs.layout, NHWC or NCHW) with a
/// transformed weight U [alpha, alpha, C, K], after the checks both layouts make: float32, stride
/// 1, dilation 1, one group, U fitting F(m x m, 3 x 3) and C. Error naming what does not fit.
struct WinogradConvShape {
  int64_t batch = 0, channels = 0, height = 0, width = 0;  ///< of the data
  int64_t outChannels = 0, outHeight = 0, outWidth = 0;
};
WinogradConvShape checkWinogradConv(const te::Tensor& data, const te::Tensor& transformedWeight, const Conv2dAttrs& attrs, int m);

}  // namespace tessel::ops
