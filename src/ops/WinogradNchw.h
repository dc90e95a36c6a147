/// Winograd's F(m x m, 3 x 3) convolution in NCHW, the form GPU builds use (TVM's
/// conv2d_nchw_winograd): the transform matrices and the weight transform are ops/Winograd.h's
/// (an OIHW weight g [K, C, 3, 3] becomes U [alpha, alpha, C, K] = G g G^T, folded once when
/// the network is built). The Winograd tiles are kept as a grid, (N, tH, tW) with
/// tH = ceil(OH / m) and tW = ceil(OW / m), rather than TVM's flattened P = N tH tW, so that
/// a block of tiles the GPU schedule gives one thread block is a box of the image and bound
/// inference sizes its buffers exactly. The stages (tag = name):
///   winograd_nchw_pad          [N, C, m tH + 2, m tW + 2]        the input padded to whole tiles (tag injective,pad)
///   winograd_nchw_input        [alpha, alpha, C, N, tH, tW]      V = B^T d B per tile (the data pack)
///   winograd_nchw_gemm         [alpha, alpha, K, N, tH, tW]      M = sum over c of U[., ., c, k] V[., ., c, .] (batched GEMMs)
///   winograd_nchw_output_rows  [m, alpha, K, N, tH, tW]          A^T M
///   conv2d_winograd_nchw       [N, K, OH, OW]                    (A^T M) A, the tiles' overhang cropped
/// Each transform is a sum over the matrices' nonzero entries selected by the transform row
/// (winogradRow): a schedule that unrolls the row loops leaves a few additions per element.
#pragma once
#include "ops/Conv2d.h"
#include "te/Tensor.h"

namespace tessel::ops {

/// The Winograd tile grid of an NCHW convolution's output: tiles of m x m outputs.
struct WinogradNchwTiles {
  int64_t batch = 0, tileRows = 0, tileColumns = 0;  ///< N, tH = ceil(OH / m), tW = ceil(OW / m)
};
WinogradNchwTiles winogradNchwTiles(int64_t batch, int64_t outHeight, int64_t outWidth, int m);

/// The convolution of NCHW `data` [N, C, H, W] with a transformed weight U [alpha, alpha, C, K]
/// (winogradWeightTransform of an OIHW weight); padding as in conv2d, strides and dilation 1,
/// one group, float32. Error naming what does not fit.
te::Tensor conv2dWinogradNCHW(const te::Tensor& data, const te::Tensor& transformedWeight, const Conv2dAttrs& attrs, int m);

/// The tile size GPU builds transform a candidate convolution with: F(4x4) (a quarter of the
/// direct multiplications) where 4x4 tiles cover the output exactly (resnet's 56x56 and 28x28
/// images), else F(2x2) (4/9 of them, and a quarter of F(4x4)'s rounding error): on 14x14 and
/// 7x7 images 4x4 tiles would compute 31% more outputs than the image has, past its edges.
/// (TVM's CUDA rule, F(4x4) where the input height is a multiple of 8, gives F(2x2) on 28x28.)
int gpuWinogradTileSize(int64_t outHeight, int64_t outWidth);

}  // namespace tessel::ops
