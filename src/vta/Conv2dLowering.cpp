#include "vta/Conv2dLowering.h"

#include <fmt/format.h>

#include <cstring>

#include "support/Error.h"
#include "vta/TileProtocol.h"

namespace tessel::vta {

namespace {

/// The DMA's padding fields are 4 bits wide.
constexpr int64_t kMaxPadding = 15;

/// Where one tile's data lives on chip.
struct TileLayout {
  int64_t inputRows, inputColumns;  ///< of the input tile, halo included
  /// Image rows from one loaded row to the next: the stride of a 1x1 convolution without
  /// vertical padding (the rows between are never read, so the DMA skips them), else 1.
  int64_t rowStep;
  int64_t inputElements;            ///< one set of input tiles: inputBlocks of them
  int64_t weightElements;           ///< one set of weight tiles
  int64_t outputs;                  ///< accumulator elements of one output-channel block
  int64_t accumulators;             ///< the output tile: outputBlocks * outputs
  std::vector<int64_t> operandBase; ///< per epilogue step: its operand's first accumulator element, or -1
  int64_t accumulatorsUsed;         ///< tile and operands
};

TileLayout layoutOf(const Conv2dWorkload& w, const Conv2dTiling& t, const PackedConvolution& group) {
  TileLayout l;
  bool skipRows = w.kernelHeight == 1 && w.strideHeight > 1 && w.padding[0] == 0 && w.padding[2] == 0;
  l.rowStep = skipRows ? w.strideHeight : 1;
  l.inputRows = skipRows ? t.rows : (t.rows - 1) * w.strideHeight + w.kernelHeight;
  l.inputColumns = (t.columns - 1) * w.strideWidth + w.kernelWidth;
  l.inputElements = t.inputBlocks * l.inputRows * l.inputColumns;
  l.weightElements = t.outputBlocks * t.inputBlocks * w.kernelHeight * w.kernelWidth;
  l.outputs = t.rows * t.columns;
  l.accumulators = t.outputBlocks * l.outputs;
  l.operandBase = operandBases(group, l.accumulators, t.outputBlocks, &l.accumulatorsUsed);
  return l;
}

}  // namespace

Conv2dWorkload Conv2dWorkload::of(const graph::Graph& graph, int convolution) {
  const graph::Node& n = graph.node(convolution);
  TESSEL_CHECK(n.op == "conv2d_blocked", "node '{}' ({}) is not conv2d_blocked", n.name, n.op);
  const auto& d = graph.node(n.inputs[0]).type.shape;
  const auto& k = graph.node(n.inputs[1]).type.shape;
  Conv2dWorkload w;
  w.batchBlocks = d[0];
  w.inputBlocks = d[1];
  w.height = d[2];
  w.width = d[3];
  w.outputBlocks = k[0];
  w.kernelHeight = k[2];
  w.kernelWidth = k[3];
  auto strides = n.attrs.value("strides", std::vector<int64_t>{1, 1});
  auto padding = n.attrs.value("padding", std::vector<int64_t>{0, 0, 0, 0});
  if (padding.size() == 2) padding = {padding[0], padding[1], padding[0], padding[1]};
  w.strideHeight = strides.at(0);
  w.strideWidth = strides.at(1);
  for (size_t i = 0; i < 4; ++i) w.padding[i] = padding.at(i);
  w.outHeight = n.type.shape[2];
  w.outWidth = n.type.shape[3];
  return w;
}

int64_t Conv2dWorkload::gemmCount() const {
  return batchBlocks * outputBlocks * outHeight * outWidth * inputBlocks * kernelHeight * kernelWidth;
}

std::optional<std::string> tilingProblem(const Conv2dWorkload& w, const Conv2dTiling& t, const PackedConvolution& group,
                                         const HardwareConfig& config) {
  auto divides = [](int64_t tile, int64_t axis) { return tile >= 1 && axis % tile == 0; };
  if (!divides(t.rows, w.outHeight)) return fmt::format("tile of {} rows does not divide the {} output rows", t.rows, w.outHeight);
  if (!divides(t.columns, w.outWidth))
    return fmt::format("tile of {} columns does not divide the {} output columns", t.columns, w.outWidth);
  if (!divides(t.inputBlocks, w.inputBlocks))
    return fmt::format("tile of {} input-channel blocks does not divide the {}", t.inputBlocks, w.inputBlocks);
  if (!divides(t.outputBlocks, w.outputBlocks))
    return fmt::format("tile of {} output-channel blocks does not divide the {}", t.outputBlocks, w.outputBlocks);
  for (int64_t p : w.padding)
    if (p > kMaxPadding) return fmt::format("padding of {} exceeds the DMA's {} per side", p, kMaxPadding);
  TileLayout l = layoutOf(w, t, group);
  if (auto problem = tileBufferProblem(t.loadBufferSets, t.accumulatorSets, group, config, l.inputElements, l.weightElements,
                                       l.accumulatorsUsed, t.outputBlocks * t.inputBlocks * w.kernelHeight * w.kernelWidth))
    return problem;
  if (t.rows > kMaxLoopExtent || t.columns > kMaxLoopExtent || l.accumulators > kMaxLoopExtent)
    return fmt::format("a micro-op loop of the tile exceeds {} iterations", kMaxLoopExtent);
  return std::nullopt;
}

namespace {

/// The emission of one call: the tile loops of TVM's schedule (batch, rows, output channels,
/// columns), the input-channel tiles inside.
class Conv2dEmitter {
 public:
  Conv2dEmitter(CommandStream& stream, const Conv2dWorkload& w, const Conv2dTiling& t, const PackedConvolution& group,
                const Conv2dBuffers& buffers)
      : s_(stream),
        w_(w),
        t_(t),
        group_(group),
        b_(buffers),
        l_(layoutOf(w, t, group)),
        tokens_(stream, w.batchBlocks * (w.outHeight / t.rows) * (w.outputBlocks / t.outputBlocks) * (w.outWidth / t.columns),
                w.inputBlocks / t.inputBlocks, t.loadBufferSets, t.accumulatorSets, l_.accumulatorsUsed) {}

  void run() {
    int64_t rowTiles = w_.outHeight / t_.rows, columnTiles = w_.outWidth / t_.columns;
    int64_t channelTiles = w_.outputBlocks / t_.outputBlocks, inputTiles = w_.inputBlocks / t_.inputBlocks;
    for (int64_t nb = 0; nb < w_.batchBlocks; ++nb)
      for (int64_t rt = 0; rt < rowTiles; ++rt)
        for (int64_t ct = 0; ct < channelTiles; ++ct)
          for (int64_t wt = 0; wt < columnTiles; ++wt) tile(nb, rt * t_.rows, ct * t_.outputBlocks, wt * t_.columns, inputTiles);
  }

 private:
  void tile(int64_t nb, int64_t row, int64_t firstBlock, int64_t column, int64_t inputTiles) {
    acc_ = tokens_.beginTile();
    MicroKernel reset;
    reset.loop(uint32_t(l_.accumulators), 1, 0).push(acc_, 0, 0);
    s_.gemm(reset, true);
    for (int64_t it = 0; it < inputTiles; ++it) accumulate(nb, row, firstBlock, column, it * t_.inputBlocks);
    EpilogueTile e{acc_, uint32_t(l_.accumulators), t_.outputBlocks, firstBlock, uint32_t(l_.outputs), 1, uint32_t(l_.outputs),
                   l_.operandBase};
    emitEpilogue(s_, group_, b_.operands, e, [&](const DeviceBuffer& buffer, MemoryType type, uint32_t base) {
      for (int64_t kb = 0; kb < t_.outputBlocks; ++kb)
        s_.loadBuffer2D(buffer, imageElement(nb, firstBlock + kb, row, column), uint32_t(t_.columns), uint32_t(t_.rows),
                        uint32_t(w_.outWidth), Padding{}, type, uint32_t(base + kb * l_.outputs));
    });
    tokens_.storeTile(group_.storedBytes, acc_, uint32_t(l_.accumulators), [&](int plane) {
      uint64_t planeOffset = uint64_t(plane) * outputElements();
      for (int64_t kb = 0; kb < t_.outputBlocks; ++kb)
        s_.storeBuffer2D(acc_ + uint32_t(kb * l_.outputs), b_.output, planeOffset + imageElement(nb, firstBlock + kb, row, column),
                         uint32_t(t_.columns), uint32_t(t_.rows), uint32_t(w_.outWidth));
    });
  }

  uint64_t outputElements() const { return uint64_t(w_.batchBlocks * w_.outputBlocks * w_.outHeight * w_.outWidth); }

  /// Element (nb, block, row, column) of an output-shaped image [N/b, K/c, OH, OW].
  uint64_t imageElement(int64_t nb, int64_t block, int64_t row, int64_t column) const {
    return uint64_t(((nb * w_.outputBlocks + block) * w_.outHeight + row) * w_.outWidth + column);
  }

  /// One input-channel tile: its inputs and weights loaded into the next buffer set, the GEMM
  /// over the output tile.
  void accumulate(int64_t nb, int64_t row, int64_t firstBlock, int64_t column, int64_t firstInput) {
    int64_t set = tokens_.beginLoad();
    uint32_t inputBase = uint32_t(set * l_.inputElements), weightBase = uint32_t(set * l_.weightElements);
    int64_t top = row * w_.strideHeight - w_.padding[0], left = column * w_.strideWidth - w_.padding[1];
    // Loaded rows are top, top + rowStep, ...: every row, or every stride-th of a 1x1
    // convolution without vertical padding (then none of them lies in the padding).
    int64_t span = (l_.inputRows - 1) * l_.rowStep + 1;
    int64_t rowsFrom = std::max<int64_t>(top, 0), rowsTo = std::min(top + span, w_.height);
    int64_t columnsFrom = std::max<int64_t>(left, 0), columnsTo = std::min(left + l_.inputColumns, w_.width);
    TESSEL_CHECK(rowsTo > rowsFrom && columnsTo > columnsFrom, "an input tile lies entirely in the padding");
    int64_t loadedRows = (rowsTo - rowsFrom - 1) / l_.rowStep + 1, padTop = rowsFrom - top;
    Padding pad{uint32_t(columnsFrom - left), uint32_t(padTop), uint32_t(left + l_.inputColumns - columnsTo),
                uint32_t(l_.inputRows - padTop - loadedRows)};
    for (int64_t cb = 0; cb < t_.inputBlocks; ++cb) {
      uint64_t source = uint64_t(((nb * w_.inputBlocks + firstInput + cb) * w_.height + rowsFrom) * w_.width + columnsFrom);
      s_.loadBuffer2D(b_.data, source, uint32_t(columnsTo - columnsFrom), uint32_t(loadedRows), uint32_t(w_.width * l_.rowStep), pad,
                      MemoryType::Input, inputBase + uint32_t(cb * l_.inputRows * l_.inputColumns));
    }
    int64_t taps = w_.kernelHeight * w_.kernelWidth;
    s_.loadBuffer2D(b_.weight, uint64_t((firstBlock * w_.inputBlocks + firstInput) * taps), uint32_t(t_.inputBlocks * taps),
                    uint32_t(t_.outputBlocks), uint32_t(w_.inputBlocks * taps), Padding{}, MemoryType::Weight, weightBase);
    tokens_.loadIssued();
    // Output rows and columns are the kernel's two loops; a micro-op per (block, tap).
    MicroKernel conv;
    conv.loop(uint32_t(t_.rows), uint32_t(t_.columns), uint32_t(w_.strideHeight / l_.rowStep * l_.inputColumns), 0)
        .loop(uint32_t(t_.columns), 1, uint32_t(w_.strideWidth), 0);
    for (int64_t kb = 0; kb < t_.outputBlocks; ++kb)
      for (int64_t cb = 0; cb < t_.inputBlocks; ++cb)
        for (int64_t ky = 0; ky < w_.kernelHeight; ++ky)
          for (int64_t kx = 0; kx < w_.kernelWidth; ++kx)
            conv.push(acc_ + uint32_t(kb * l_.outputs), inputBase + uint32_t((cb * l_.inputRows + ky) * l_.inputColumns + kx),
                      weightBase + uint32_t((kb * t_.inputBlocks + cb) * taps + ky * w_.kernelWidth + kx));
    s_.gemm(conv);
    tokens_.gemmIssued();
  }

  CommandStream& s_;
  const Conv2dWorkload& w_;
  const Conv2dTiling& t_;
  const PackedConvolution& group_;
  const Conv2dBuffers& b_;
  TileLayout l_;
  TileTokens tokens_;
  uint32_t acc_ = 0;  ///< the first accumulator element of the current tile's set
};

}  // namespace

void emitConv2d(CommandStream& stream, const Conv2dWorkload& workload, const Conv2dTiling& tiling, const PackedConvolution& group,
                const Conv2dBuffers& buffers) {
  if (auto problem = tilingProblem(workload, tiling, group, stream.device().config())) fail("VTA conv2d: {}", *problem);
  size_t operands = 0;
  for (const AluStep& s : group.epilogue) operands += s.immediate ? 0 : 1;
  TESSEL_CHECK(buffers.operands.size() == operands, "VTA conv2d: {} operand buffers for {} operands", buffers.operands.size(),
               operands);
  Conv2dEmitter(stream, workload, tiling, group, buffers).run();
}

Conv2dTiling defaultConv2dTiling(const Conv2dWorkload& workload, const PackedConvolution& group, const HardwareConfig& config) {
  std::optional<std::string> problem;
  for (int64_t sets : {2, 1})
    for (int64_t rows = workload.outHeight; rows >= 1; --rows) {
      if (workload.outHeight % rows != 0) continue;
      Conv2dTiling tiling{rows, workload.outWidth, 1, 1, sets, group.storedBytes == 1 ? sets : 1};
      problem = tilingProblem(workload, tiling, group, config);
      if (!problem) return tiling;
    }
  fail("VTA conv2d: no tiling of whole rows fits: {}", *problem);
}

runtime::Tensor runConv2dGroup(CommandStream& stream, const graph::Graph& graph, const graph::FusedGroup& fused,
                               const PackedConvolution& group, const Conv2dTiling& tiling,
                               const std::function<runtime::Tensor(int node)>& valueOf) {
  Conv2dWorkload workload = Conv2dWorkload::of(graph, group.convolution);
  return runPackedGroup(
      stream, graph, fused, group, [&](const Conv2dBuffers& buffers) { emitConv2d(stream, workload, tiling, group, buffers); },
      valueOf);
}

runtime::Tensor runPackedGroup(CommandStream& stream, const graph::Graph& graph, const graph::FusedGroup& fused,
                               const PackedConvolution& group, const std::function<void(const Conv2dBuffers&)>& emit,
                               const std::function<runtime::Tensor(int node)>& valueOf) {
  std::vector<DeviceBuffer> uploaded;
  auto upload = [&](int node) {
    runtime::Tensor value = valueOf(node);
    DeviceBuffer b = stream.allocate(value.nbytes());
    stream.copyToDevice(b, value.data(), value.nbytes());
    uploaded.push_back(b);
    return b;
  };
  Conv2dBuffers buffers;
  buffers.data = upload(group.data);
  buffers.weight = upload(group.weight);
  for (const AluStep& s : group.epilogue)
    if (!s.immediate) buffers.operands.push_back(upload(s.operand));
  const graph::TensorType& type = graph.node(fused.output).type;
  auto result = runtime::Tensor::empty(type.shape, type.dtype);
  TESSEL_CHECK(size_t(group.storedBytes) == result.nbytes() / size_t(std::max<int64_t>(result.numel(), 1)),
               "node '{}': {} stored bytes per value for a {} result", graph.node(fused.output).name, group.storedBytes,
               type.dtype.str());
  std::vector<int8_t> stored(result.nbytes());
  buffers.output = stream.allocate(stored.size());
  uploaded.push_back(buffers.output);
  emit(buffers);
  stream.synchronize();
  stream.copyFromDevice(buffers.output, stored.data(), stored.size());
  for (const DeviceBuffer& b : uploaded) stream.release(b);
  if (group.storedBytes == 1) std::memcpy(result.data(), stored.data(), stored.size());
  else std::memcpy(result.data(), joinBytePlanes(stored).data(), result.nbytes());
  return result;
}

}  // namespace tessel::vta
