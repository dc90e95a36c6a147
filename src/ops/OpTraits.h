/// What the schedules and the tuning templates know of an operation, looked up by its compute
/// tag in one table (OpTraits.cpp): its kind, whether it anchors a fused function's register
/// tile and along which output axes, which CPU template tunes a function it anchors, and how
/// its padding is placed by default. Nothing else matches tag strings: a new operator gets its
/// row here and every rule and template sees it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "te/Tensor.h"

namespace tessel::ops {

enum class OpKind {
  Other,                 ///< element-wise, injective, pooling, softmax, ...: the generic rules
  Padding,               ///< a padded copy of an image (tag "injective,pad")
  Conv2dNCHW,
  Conv2dNHWC,
  Conv2dNHWCPacked,      ///< weight [K / block, KH, KW, C, block]: the tile's vectors are one block
  GroupConv2dNCHW,
  GroupConv2dNHWC,
  DepthwiseConv2dNCHW,
  DepthwiseConv2dNHWC,
  Conv2dTransposeNCHW,
  Dense,                 ///< [N, K] x [M, K]^T: vectorized along the reduction
  Matmul,                ///< [N, K] x [K, M]
  MatmulPacked,          ///< [..., M, K] x B packed [N / block, K, block]: the tile's vectors are one block
  BatchMatmul,           ///< [..., M, K] x [..., K, N], leading axes broadcast
  WinogradGemm,          ///< Winograd's alpha^2 batched GEMMs
  WinogradInputRows,     ///< Winograd's transforms (ops/Winograd.h)
  WinogradInput,
  WinogradOutputRows,
  WinogradOutput,
  WinogradNchwInput,     ///< the NCHW form's stages (ops/WinogradNchw.h), which GPU builds use
  WinogradNchwGemm,
  WinogradNchwOutputRows,
  WinogradNchwOutput,
};

/// The output axes of an anchor that carry its register tile: lanes along `vectorAxis` (the
/// contiguous one), rows along `rowAxis`.
struct TileAxes {
  int vectorAxis, rowAxis;
};

struct OpTraits {
  OpKind kind = OpKind::Other;
  std::string tag;                  ///< the compute tag (ops set it; "" for Other)
  bool anchor = false;              ///< its function's heaviest such op gets the register tile
  /// The output rank `tileAxes` are for (0: no register tile; kAnyRank: every rank of 2 or
  /// more, the axes then counted from the last one: -1 the last, -2 the one before).
  int tileRank = 0;
  TileAxes tileAxes{-1, -1};
  std::string cpuTemplate;          ///< the template tuning a function it anchors ("" none)
  bool inlinePaddingByDefault = false;  ///< the default rules compute its padding inside its loops
  bool winogradTransform = false;   ///< a transform stage the Winograd rule schedules
  /// The output axis whose elements read the same inputs with different weights (a direct
  /// convolution's output channels): a GPU thread computing several along it loads each input
  /// once for all of them. -1: none.
  int channelAxis = -1;
};

/// OpTraits::tileRank of an operator whose tile axes are counted from the end (stacks of matrices).
inline constexpr int kAnyRank = -1;

/// The traits of an operation (OpKind::Other for tags the table does not know).
const OpTraits& traitsOf(const te::OperationNode& op);

/// The register tile axes of an anchor with an output of `rank` dimensions, if it has one.
std::optional<TileAxes> registerTileAxes(const OpTraits& traits, size_t rank);

/// Every row of the table, in order (for listings: the templates there are).
const std::vector<OpTraits>& allOpTraits();

}  // namespace tessel::ops
