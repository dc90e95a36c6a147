#include "ops/OpTraits.h"

#include <unordered_map>

namespace tessel::ops {

namespace {

OpTraits row(OpKind kind, std::string tag, bool anchor, int tileRank, TileAxes axes, std::string cpuTemplate,
             bool inlinePadding = false, bool winogradTransform = false, int channelAxis = -1) {
  return {kind, std::move(tag), anchor, tileRank, axes, std::move(cpuTemplate), inlinePadding, winogradTransform, channelAxis};
}

}  // namespace

const std::vector<OpTraits>& allOpTraits() {
  // Tile axes: lanes along the contiguous output axis (channels in NHWC, width in NCHW,
  // columns of matmul), rows along the next one that reuses the same weights. The padding of
  // NHWC and depthwise convolutions is inlined: they read one vector of channels per window
  // position, so the border test is one scalar test per vector, and lowering turns it into
  // loop bounds (passes/GuardPaddedTaps.cpp) that skip the taps on the padding altogether.
  // Against a padded copy: mobilenet-v2 about 15% faster; resnet-18's 3x3 convolutions 3-8%
  // faster on 56x56 to 28x28 images, 5-25% on 14x14 and 7x7 (2-core Zen 5, 2026-11-24).
  static const std::vector<OpTraits> table = {
      row(OpKind::Padding, "injective,pad", false, 0, {-1, -1}, ""),
      row(OpKind::Conv2dNCHW, "conv2d_nchw", true, 4, {3, 1}, "conv2d_nchw.x86", false, false, 1),
      row(OpKind::Conv2dNHWC, "conv2d_nhwc", true, 4, {3, 2}, "conv2d_nhwc.x86", true, false, 3),
      row(OpKind::Conv2dNHWCPacked, "conv2d_nhwc_packed", true, 4, {3, 2}, "conv2d_nhwc_packed.x86", true),
      row(OpKind::GroupConv2dNCHW, "group_conv2d_nchw", true, 4, {3, 1}, "group_conv2d_nchw.x86"),
      row(OpKind::GroupConv2dNHWC, "group_conv2d_nhwc", true, 4, {3, 2}, "group_conv2d_nhwc.x86"),
      row(OpKind::DepthwiseConv2dNCHW, "depthwise_conv2d_nchw", true, 4, {3, 2}, "depthwise_conv2d_nchw.x86", true),
      row(OpKind::DepthwiseConv2dNHWC, "depthwise_conv2d_nhwc", true, 4, {3, 2}, "depthwise_conv2d_nhwc.x86", true),
      row(OpKind::Conv2dTransposeNCHW, "conv2d_transpose_nchw", true, 4, {3, 1}, ""),
      row(OpKind::Dense, "dense", true, 0, {-1, -1}, "dense.x86"),
      row(OpKind::Matmul, "matmul", true, 2, {1, 0}, "matmul.x86"),
      // Stacks of matrices, any number of leading axes: lanes along the columns, rows along the rows.
      row(OpKind::MatmulPacked, "matmul_packed", true, kAnyRank, {-1, -2}, "matmul_packed.x86"),
      row(OpKind::BatchMatmul, "batch_matmul", true, kAnyRank, {-1, -2}, "batch_matmul.x86"),
      // [alpha, alpha, tiles, out channels]: vectors along the channels, rows along the tiles.
      row(OpKind::WinogradGemm, "winograd_gemm", true, 4, {3, 2}, "conv2d_nhwc_winograd.x86"),
      row(OpKind::WinogradInputRows, "winograd_input_rows", false, 0, {-1, -1}, "", false, true),
      row(OpKind::WinogradInput, "winograd_input", false, 0, {-1, -1}, "", false, true),
      row(OpKind::WinogradOutputRows, "winograd_output_rows", false, 0, {-1, -1}, "", false, true),
      row(OpKind::WinogradOutput, "conv2d_winograd_nhwc", false, 0, {-1, -1}, ""),
      // The NCHW form: GPU builds only (the GPU Winograd tiles, ops/GpuWinogradTiles.h); no
      // CPU register tile or template.
      row(OpKind::WinogradNchwInput, "winograd_nchw_input", false, 0, {-1, -1}, ""),
      row(OpKind::WinogradNchwGemm, "winograd_nchw_gemm", true, 0, {-1, -1}, ""),
      row(OpKind::WinogradNchwOutputRows, "winograd_nchw_output_rows", false, 0, {-1, -1}, ""),
      row(OpKind::WinogradNchwOutput, "conv2d_winograd_nchw", false, 0, {-1, -1}, ""),
  };
  return table;
}

const OpTraits& traitsOf(const te::OperationNode& op) {
  // A map: the default schedule asks for every stage of every config a tuner's search visits.
  static const OpTraits other;
  static const std::unordered_map<std::string, const OpTraits*> byTag = [] {
    std::unordered_map<std::string, const OpTraits*> m;
    for (const OpTraits& t : allOpTraits()) m.emplace(t.tag, &t);
    return m;
  }();
  auto it = byTag.find(op.tag);
  return it == byTag.end() ? other : *it->second;
}

std::optional<TileAxes> registerTileAxes(const OpTraits& traits, size_t rank) {
  if (traits.tileRank == kAnyRank) {
    if (rank < 2) return std::nullopt;
    return TileAxes{int(rank) + traits.tileAxes.vectorAxis, int(rank) + traits.tileAxes.rowAxis};
  }
  if (traits.tileRank == 0 || size_t(traits.tileRank) != rank) return std::nullopt;
  return traits.tileAxes;
}

}  // namespace tessel::ops
