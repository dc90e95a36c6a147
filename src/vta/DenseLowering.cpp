#include "vta/DenseLowering.h"

#include <fmt/format.h>

#include "support/Error.h"
#include "vta/TileProtocol.h"

namespace tessel::vta {

namespace {

/// The on-chip footprint of one tile.
struct DenseLayout {
  int64_t inputElements, weightElements;  ///< one set of each
  int64_t accumulators;                   ///< the output tile: batchBlocks * outputBlocks, batch-major
  std::vector<int64_t> operandBase;       ///< per epilogue step, after the tile (-1: an immediate)
  int64_t accumulatorsUsed;               ///< tile and operands
};

DenseLayout layoutOf(const DenseTiling& t, const PackedConvolution& group) {
  DenseLayout l;
  l.inputElements = t.batchBlocks * t.inputBlocks;
  l.weightElements = t.outputBlocks * t.inputBlocks;
  l.accumulators = t.batchBlocks * t.outputBlocks;
  l.operandBase = operandBases(group, l.accumulators, t.outputBlocks, &l.accumulatorsUsed);
  return l;
}

/// The divisors of n, largest first.
std::vector<int64_t> divisorsDescending(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = n; d >= 1; --d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace

DenseWorkload DenseWorkload::of(const graph::Graph& graph, int dense) {
  const graph::Node& n = graph.node(dense);
  TESSEL_CHECK(n.op == "dense_blocked", "node '{}' ({}) is not dense_blocked", n.name, n.op);
  const auto& d = graph.node(n.inputs[0]).type.shape;  // [N/b, C/c, b, c]
  const auto& w = graph.node(n.inputs[1]).type.shape;  // [M/c, C/c, c, c]
  return DenseWorkload{d[0], d[1], w[0]};
}

std::optional<std::string> denseTilingProblem(const DenseWorkload& w, const DenseTiling& t, const PackedConvolution& group,
                                              const HardwareConfig& config) {
  auto divides = [](int64_t tile, int64_t axis) { return tile >= 1 && axis % tile == 0; };
  if (!divides(t.batchBlocks, w.batchBlocks))
    return fmt::format("tile of {} batch blocks does not divide the {}", t.batchBlocks, w.batchBlocks);
  if (!divides(t.inputBlocks, w.inputBlocks))
    return fmt::format("tile of {} input-channel blocks does not divide the {}", t.inputBlocks, w.inputBlocks);
  if (!divides(t.outputBlocks, w.outputBlocks))
    return fmt::format("tile of {} output-channel blocks does not divide the {}", t.outputBlocks, w.outputBlocks);
  DenseLayout l = layoutOf(t, group);
  if (auto problem = tileBufferProblem(t.loadBufferSets, t.accumulatorSets, group, config, l.inputElements, l.weightElements,
                                       l.accumulatorsUsed, t.outputBlocks * t.inputBlocks))
    return problem;
  if (t.batchBlocks > kMaxLoopExtent || l.accumulators > kMaxLoopExtent)
    return fmt::format("a micro-op loop of the tile exceeds {} iterations", kMaxLoopExtent);
  return std::nullopt;
}

namespace {

/// The emission of one call: TVM's output loops (batch tiles, output-channel tiles; the store
/// point), the input-channel tiles inside.
class DenseEmitter {
 public:
  DenseEmitter(CommandStream& stream, const DenseWorkload& w, const DenseTiling& t, const PackedConvolution& group,
               const Conv2dBuffers& buffers)
      : s_(stream),
        w_(w),
        t_(t),
        group_(group),
        b_(buffers),
        l_(layoutOf(t, group)),
        tokens_(stream, (w.batchBlocks / t.batchBlocks) * (w.outputBlocks / t.outputBlocks), w.inputBlocks / t.inputBlocks,
                t.loadBufferSets, t.accumulatorSets, l_.accumulatorsUsed) {}

  void run() {
    for (int64_t nb = 0; nb < w_.batchBlocks; nb += t_.batchBlocks)
      for (int64_t kb = 0; kb < w_.outputBlocks; kb += t_.outputBlocks) tile(nb, kb);
  }

 private:
  /// Element (batch block, channel block) of an output-shaped value [N/b, M/c].
  uint64_t outputElement(int64_t nb, int64_t block) const { return uint64_t(nb * w_.outputBlocks + block); }

  void tile(int64_t firstBatch, int64_t firstBlock) {
    uint32_t acc = tokens_.beginTile();
    auto accumulators = uint32_t(l_.accumulators);
    MicroKernel reset;
    reset.loop(accumulators, 1, 0).push(acc, 0, 0);
    s_.gemm(reset, true);
    for (int64_t ci = 0; ci < w_.inputBlocks; ci += t_.inputBlocks) accumulate(acc, firstBatch, firstBlock, ci);
    // Accumulators are [batch block][channel block] of the tile: a per-channel operand's kernel
    // walks the batch blocks, one micro-op per channel block.
    EpilogueTile e{acc, accumulators, t_.outputBlocks, firstBlock, uint32_t(t_.batchBlocks), uint32_t(t_.outputBlocks), 1,
                   l_.operandBase};
    emitEpilogue(s_, group_, b_.operands, e, [&](const DeviceBuffer& buffer, MemoryType type, uint32_t base) {
      s_.loadBuffer2D(buffer, outputElement(firstBatch, firstBlock), uint32_t(t_.outputBlocks), uint32_t(t_.batchBlocks),
                      uint32_t(w_.outputBlocks), Padding{}, type, base);
    });
    uint64_t outputs = uint64_t(w_.batchBlocks * w_.outputBlocks);
    tokens_.storeTile(group_.storedBytes, acc, accumulators, [&](int plane) {
      s_.storeBuffer2D(acc, b_.output, uint64_t(plane) * outputs + outputElement(firstBatch, firstBlock), uint32_t(t_.outputBlocks),
                       uint32_t(t_.batchBlocks), uint32_t(w_.outputBlocks));
    });
  }

  /// One input-channel tile: the tile's input blocks (rows: batch blocks) and weight blocks
  /// (rows: output blocks) loaded into the next buffer set, then the GEMM over the tile.
  void accumulate(uint32_t acc, int64_t firstBatch, int64_t firstBlock, int64_t firstInput) {
    int64_t set = tokens_.beginLoad();
    auto inputBase = uint32_t(set * l_.inputElements), weightBase = uint32_t(set * l_.weightElements);
    s_.loadBuffer2D(b_.data, uint64_t(firstBatch * w_.inputBlocks + firstInput), uint32_t(t_.inputBlocks), uint32_t(t_.batchBlocks),
                    uint32_t(w_.inputBlocks), Padding{}, MemoryType::Input, inputBase);
    s_.loadBuffer2D(b_.weight, uint64_t(firstBlock * w_.inputBlocks + firstInput), uint32_t(t_.inputBlocks),
                    uint32_t(t_.outputBlocks), uint32_t(w_.inputBlocks), Padding{}, MemoryType::Weight, weightBase);
    tokens_.loadIssued();
    // The kernel's loop walks the tile's batch blocks; a micro-op per (output block, input block).
    MicroKernel gemm;
    gemm.loop(uint32_t(t_.batchBlocks), uint32_t(t_.outputBlocks), uint32_t(t_.inputBlocks), 0);
    for (int64_t kb = 0; kb < t_.outputBlocks; ++kb)
      for (int64_t cb = 0; cb < t_.inputBlocks; ++cb)
        gemm.push(acc + uint32_t(kb), inputBase + uint32_t(cb), weightBase + uint32_t(kb * t_.inputBlocks + cb));
    s_.gemm(gemm);
    tokens_.gemmIssued();
  }

  CommandStream& s_;
  const DenseWorkload& w_;
  const DenseTiling& t_;
  const PackedConvolution& group_;
  const Conv2dBuffers& b_;
  DenseLayout l_;
  TileTokens tokens_;
};

}  // namespace

void emitDense(CommandStream& stream, const DenseWorkload& workload, const DenseTiling& tiling, const PackedConvolution& group,
               const Conv2dBuffers& buffers) {
  if (auto problem = denseTilingProblem(workload, tiling, group, stream.device().config())) fail("VTA dense: {}", *problem);
  size_t operands = 0;
  for (const AluStep& s : group.epilogue) operands += s.immediate ? 0 : 1;
  TESSEL_CHECK(buffers.operands.size() == operands, "VTA dense: {} operand buffers for {} operands", buffers.operands.size(),
               operands);
  DenseEmitter(stream, workload, tiling, group, buffers).run();
}

DenseTiling defaultDenseTiling(const DenseWorkload& workload, const PackedConvolution& group, const HardwareConfig& config) {
  std::optional<std::string> problem;
  for (int64_t sets : {2, 1})
    for (int64_t batchBlocks : divisorsDescending(workload.batchBlocks))
      for (int64_t inputBlocks : divisorsDescending(workload.inputBlocks))
        for (int64_t outputBlocks : divisorsDescending(workload.outputBlocks)) {
          DenseTiling tiling{batchBlocks, inputBlocks, outputBlocks, sets, group.storedBytes == 1 ? sets : 1};
          problem = denseTilingProblem(workload, tiling, group, config);
          if (!problem) return tiling;
        }
  fail("VTA dense: no tiling fits, not even one block of each: {}", *problem);
}

runtime::Tensor runDenseGroup(CommandStream& stream, const graph::Graph& graph, const graph::FusedGroup& fused,
                              const PackedConvolution& group, const DenseTiling& tiling,
                              const std::function<runtime::Tensor(int node)>& valueOf) {
  DenseWorkload workload = DenseWorkload::of(graph, group.convolution);
  return runPackedGroup(
      stream, graph, fused, group, [&](const Conv2dBuffers& buffers) { emitDense(stream, workload, tiling, group, buffers); },
      valueOf);
}

}  // namespace tessel::vta
