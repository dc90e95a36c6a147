#include "ops/GpuDenseTiles.h"

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <tuple>

#include "ops/Schedules.h"
#include "passes/GpuLaunch.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {
constexpr const char* kDenseSchedule = "GPU dense tiles";
constexpr const char* kGemmSchedule = "GPU GEMM tiles";
constexpr int64_t kGemmTilesMinExtent = 16;
/// Reductions shorter than this leave too little to stage per chunk (a chunk waits at two barriers).
constexpr int64_t kGemmTilesMinChunk = 4;
/// A warp's threads on tensor cores: 8 along the rows by 4 along the columns (the instruction's
/// fragments, PTX ISA mma.m16n8k8).
constexpr int64_t kWarpRows = 8, kWarpColumns = 4;
/// When a product's tensor-core tile beats the fp32 tile untuned. Measured on an H200
/// (bench_gpu_gemm, 2026-11-30, both tiles with float4 double-buffered copies), 3xTF32 against
/// fp32: BERT-base's 128 x 768 x 768 and 128 x 768 x 3072 products with 384 warps (2.9 per
/// multiprocessor) and 12 or 48 chunks 0.91x and 0.89x, its 128 x 3072 x 768 product 0.69-0.71x;
/// attention's 128 x 128 x 64 heads (one chunk of 64) 1.11-1.15x and 128 x 64 x 128 (two
/// chunks) 0.996-1.009x: the next chunk's copies overlap the products only when there is a next
/// chunk, and the three products per step cost more than the fp32 tile's where nothing hides
/// them. (Before double buffering, with scalar copies, the 2.9-warp products were 1.69x slower:
/// each warp waited on its own copies.) A ragged last tile of rows costs its guarded copies:
/// ViT-B/16's 197-token products, with the guards one test per float4, ran 0.69x (197 x 2304 x
/// 768, 7.6 warps per multiprocessor) and 0.76x (197 x 3072 x 768, 10 warps) the fp32 tile's
/// time but 1.22x and 1.19x with 2.5 warps (197 x 768 x 768 and x 3072), so a tile that does
/// not cover the product exactly needs twice the warps (before the guards were wide, every
/// ragged product but the first lost, 1.32-1.41x); tuning may pick others. One TF32 product a
/// step (2026-12-01, same bench) hides the guards with 2.5 warps: 197 x 768 x 768 0.760x the
/// fp32 tile's time (3xTF32 1.22x), so a TF32 tile needs no more warps ragged than exact; its
/// one-chunk attention heads stay a tie or a loss (BERT-base's 1.01x and 0.95x, ViT-B/16's
/// 197 x 197 x 64 1.14x), as the chunk count keeps them off.
constexpr int64_t kTensorCoreMinWarpsPerMultiprocessor = 2;
constexpr int64_t kTensorCoreMinWarpsPerMultiprocessorRagged = 4;
constexpr int64_t kTensorCoreMinChunks = 4;

/// The longest divisor of the reduction up to 32 (the tuned BERT-base products on an H200 took
/// 24); where that is shorter than 8 (ViT's 197 tokens, a prime), 32 or the whole reduction,
/// the last chunk guarded: short chunks would wait at two barriers for every few products.
int64_t longestChunk(int64_t reduction) {
  int64_t chunk = std::min<int64_t>(32, reduction);
  while (reduction % chunk != 0) --chunk;
  return chunk >= 8 ? chunk : std::min<int64_t>(32, reduction);
}

/// The blocks of tiles of `rowTile` x `columnTile` outputs over one product, and the share of
/// their outputs inside it (a ragged last tile computes past the product).
struct TileCover {
  int64_t rowBlocks = 0, columnBlocks = 0;
  double covered = 0;
};

TileCover coverOf(const GpuGemmShape& shape, int64_t rowTile, int64_t columnTile) {
  TileCover c;
  c.rowBlocks = (shape.rows + rowTile - 1) / rowTile;
  c.columnBlocks = (shape.columns + columnTile - 1) / columnTile;
  c.covered = double(shape.rows * shape.columns) / double(c.rowBlocks * rowTile * c.columnBlocks * columnTile);
  return c;
}

bool everyThreadWorks(const std::array<int64_t, 3>& parts, int64_t extent) {
  return parts[0] > 1 || parts[1] <= (extent + parts[2] - 1) / parts[2];
}

/// One block whose threads outnumber what the extent needs: lowering bounds the thread loop by
/// what is needed, and the idle threads would skip the cooperative copies and the barriers
/// between them (a hang on OpenCL, wrong sums on CUDA). More blocks guard each element instead.
void checkEveryThreadWorks(const char* what, const std::array<int64_t, 3>& parts, int64_t extent) {
  TESSEL_CHECK(everyThreadWorks(parts, extent),
               "{}: tile_{} [{}, {}, {}] leaves threads idle: one block's {} rows or columns need {} threads of {}", kGemmSchedule,
               what, parts[0], parts[1], parts[2], extent, (extent + parts[2] - 1) / parts[2], parts[2]);
}

}  // namespace

GpuDenseShape gpuDenseShapeOf(const te::ComputeDAG& dag) {
  const auto& op = gpuTileAnchor(dag, OpKind::Dense, kDenseSchedule, "a dense layer");
  const auto& reduce = op.reduction()->axes;
  TESSEL_CHECK(op.shape.size() == 2 && reduce.size() == 1, "{}: '{}' is not a 2-d dense over one reduction axis", kDenseSchedule,
               op.name);
  return {op.name, op.shape[0], op.shape[1], reduce[0].extent};
}

GpuTileSchedule gpuDenseSmallBatch(const te::ComputeDAG& dag, const GpuDenseSmallBatchTile& tile) {
  GpuDenseShape shape = gpuDenseShapeOf(dag);
  TESSEL_CHECK(tile.reduceThreads >= 1 && shape.reduction % tile.reduceThreads == 0,
               "{}: {} threads per output do not divide the reduction of {}", kDenseSchedule, tile.reduceThreads, shape.reduction);
  TESSEL_CHECK(tile.outputThreads >= 1 && shape.outputs % tile.outputThreads == 0,
               "{}: {} outputs per block do not divide the {} outputs", kDenseSchedule, tile.outputThreads, shape.outputs);
  Recorder rec(dag, /*deferBounds=*/true);
  const std::string out = dag.outputNames()[0];
  std::string accumulator = perThreadAccumulator(rec, out, shape.anchor);
  // The threads' parts: the inner half of the reduction factored out, [t, n, m] reducing K / t,
  // summed per thread in a local stage and stored to the shared copy the final sum reads.
  std::vector<std::string> acc = rec.leaves(accumulator);  // [n, m, k]
  auto k = rec.split(accumulator, acc[2], {tile.reduceThreads});
  std::string partial = rec.rfactor(accumulator, k[1]);
  std::string partialLocal = rec.cacheWrite(partial);
  std::string partialShared = rec.cacheRead(partial, "shared", {accumulator});
  rec.computeInline(partial);
  inlineInjectiveStages(rec, dag);

  // The output: a block per batch row and tile of outputs, an output per threadIdx.y; the
  // threadIdx.x of extent 1 leaves the final sum and the store to the first thread of each part.
  std::vector<std::string> loops = rec.leaves(out);  // [n, m]
  auto m = rec.split(out, loops[1], {tile.outputThreads});
  std::string blocks = rec.fuse(out, {loops[0], m[0]});
  auto lanes = rec.split(out, m[1], {1});
  rec.annotate(out, blocks, Annotation::BlockX);
  rec.annotate(out, lanes[0], Annotation::ThreadY);
  rec.annotate(out, lanes[1], Annotation::ThreadX);
  addUnrollPragmas(rec, out, blocks, tile.autoUnrollMaxStep, tile.unrollExplicit);
  rec.computeAt(accumulator, out, lanes[1]);

  // The block's partial sums: [t, n, m] over its outputs, one per thread.
  rec.computeAt(partialShared, out, blocks);
  std::vector<std::string> sums = rec.leaves(partialShared);
  std::string outputs = rec.fuse(partialShared, {sums[1], sums[2]});
  rec.annotate(partialShared, sums[0], Annotation::ThreadX);
  rec.annotate(partialShared, outputs, Annotation::ThreadY);
  rec.computeAt(partialLocal, partialShared, outputs);
  return {rec.steps, rec.finish()};
}

GpuGemmShape gpuGemmShapeOf(const te::ComputeDAG& dag) {
  auto anchor = findAnchorStage(dag);
  TESSEL_CHECK(anchor.has_value(), "{}: the function has no matrix product to tile", kGemmSchedule);
  OpKind kind = traitsOf(*dag.op(*anchor)).kind;
  TESSEL_CHECK(kind == OpKind::Dense || kind == OpKind::Matmul || kind == OpKind::BatchMatmul,
               "{}: the anchor '{}' is {}, not dense, matmul or batch_matmul", kGemmSchedule, *anchor, traitsOf(*dag.op(*anchor)).tag);
  const auto& op = gpuTileAnchor(dag, kind, kGemmSchedule, "a matrix product");
  const auto* reduce = op.reduction();
  TESSEL_CHECK(op.shape.size() >= 2 && reduce && reduce->axes.size() == 1, "{}: '{}' is not a product over one reduction axis",
               kGemmSchedule, op.name);
  for (const auto& other : dag.ops())
    TESSEL_CHECK(other->name == op.name || !other->reduction(), "{}: the function has another reduction, '{}'", kGemmSchedule,
                 other->name);
  // The rows operand is indexed by the output's second-to-last axis, the columns operand by its
  // last (dense's [M, K] weight as much as matmul's [K, N]).
  const ir::VarNode* rowVar = op.axes[op.shape.size() - 2].var.node();
  const ir::VarNode* columnVar = op.axes.back().var.node();
  GpuGemmShape shape;
  shape.anchor = op.name;
  const ir::VarNode* reductionVar = reduce->axes[0].var.node();
  for (const auto& access : te::ComputeDAG::accesses(op)) {
    bool rows = false, columns = false;
    for (const auto& index : access.indices) {
      rows = rows || index.as<ir::VarNode>() == rowVar;
      columns = columns || index.as<ir::VarNode>() == columnVar;
    }
    bool reductionInnermost = !access.indices.empty() && access.indices.back().as<ir::VarNode>() == reductionVar;
    (rows ? shape.dataReductionInnermost : shape.otherReductionInnermost) = reductionInnermost;
    TESSEL_CHECK(rows != columns, "{}: '{}' reads '{}' along {} of its output's last two axes", kGemmSchedule, op.name,
                 access.producer, rows ? "both" : "neither");
    std::string& operand = rows ? shape.data : shape.other;
    TESSEL_CHECK(operand.empty(), "{}: '{}' reads more than two operands", kGemmSchedule, op.name);
    operand = access.producer;
  }
  TESSEL_CHECK(!shape.data.empty() && !shape.other.empty() && shape.data != shape.other,
               "{}: '{}' does not read two distinct operands", kGemmSchedule, op.name);
  for (size_t d = 0; d + 2 < op.shape.size(); ++d) shape.stack *= op.shape[d];
  shape.rows = op.shape[op.shape.size() - 2];
  shape.columns = op.shape.back();
  shape.reduction = reduce->axes[0].extent;
  return shape;
}

std::optional<GpuGemmShape> gpuGemmTilesApply(const te::ComputeDAG& dag) {
  auto anchor = findAnchorStage(dag);
  if (!anchor) return std::nullopt;
  OpKind kind = traitsOf(*dag.op(*anchor)).kind;
  if (kind != OpKind::Dense && kind != OpKind::Matmul && kind != OpKind::BatchMatmul) return std::nullopt;
  try {
    GpuGemmShape shape = gpuGemmShapeOf(dag);
    if (shape.rows >= kGemmTilesMinExtent && shape.columns >= kGemmTilesMinExtent && shape.reduction >= kGemmTilesMinChunk)
      return shape;
  } catch (const Error&) {
    // Not a lone product with an element-wise epilogue (gpuGemmShapeOf says why): not the tiles'.
  }
  return std::nullopt;
}

namespace {

/// A product's stages in a GEMM tile schedule: the per-thread accumulator and the operands'
/// shared copies, the element-wise stages inlined.
struct GemmStages {
  std::string out, accumulator, dataShared, otherShared;
};

GemmStages stageGemm(Recorder& rec, const te::ComputeDAG& dag, const GpuGemmShape& shape) {
  GemmStages s;
  s.out = dag.outputNames()[0];
  s.accumulator = perThreadAccumulator(rec, s.out, shape.anchor);
  s.dataShared = rec.cacheRead(shape.data, "shared", {s.accumulator});
  s.otherShared = rec.cacheRead(shape.other, "shared", {s.accumulator});
  inlineInjectiveStages(rec, dag);
  return s;
}

/// Splits the output's rows and columns by the inner factors (outermost first), orders the loops
/// [stack..., rows 0, columns 0, rows 1, columns 1, ...] and binds the stack (fused) to
/// blockIdx.z, the outer rows and columns to blockIdx.y and x. Returns the rows' and columns'
/// loops and the outermost loop.
struct GemmOutputLoops {
  std::vector<std::string> x, y;
  std::string outermost;
};

GemmOutputLoops tileGemmOutput(Recorder& rec, const std::string& out, const std::vector<int64_t>& rows,
                               const std::vector<int64_t>& columns) {
  std::vector<std::string> loops = rec.leaves(out);  // [stack..., rows, columns]
  std::vector<std::string> stack(loops.begin(), loops.end() - 2);
  GemmOutputLoops l;
  l.x = rec.split(out, loops[loops.size() - 2], rows);
  l.y = rec.split(out, loops.back(), columns);
  std::vector<std::string> order = stack;
  for (size_t level = 0; level < l.x.size(); ++level) order.insert(order.end(), {l.x[level], l.y[level]});
  rec.reorder(out, order);
  l.outermost = l.x[0];
  if (!stack.empty()) {
    l.outermost = stack.size() == 1 ? stack[0] : rec.fuse(out, stack);
    rec.annotate(out, l.outermost, Annotation::BlockZ);
  }
  rec.annotate(out, l.x[0], Annotation::BlockY);
  rec.annotate(out, l.y[0], Annotation::BlockX);
  return l;
}

/// The widest access up to `most` elements with which `threads` copy a window of `total`
/// elements whose rows are `innermost` long: every access within one row and every thread busy.
int64_t copyLanesOf(int64_t most, int64_t innermost, int64_t total, int64_t threads) {
  for (int64_t lanes = most; lanes > 1; lanes /= 2)
    if (innermost % lanes == 0 && total % (threads * lanes) == 0) return lanes;
  return 1;
}

/// [stack..., n, m, k] -> [k chunks, k in the chunk, stack..., n, m]: the sub-tile innermost,
/// each chunk's operand copies attached at the chunk loop and shared out over the block's
/// threads, as wide as the tile's copyLanes allows. Returns the chunk loop and the loop in the
/// chunk.
std::vector<std::string> chunkTheReduction(Recorder& rec, const GemmStages& s, const GpuGemmShape& shape, const GpuGemmTile& tile,
                                           const std::array<int64_t, 3>& threadsZYX) {
  TESSEL_CHECK(tile.copyLanes == 1 || tile.copyLanes == 2 || tile.copyLanes == 4,
               "{}: copies of {} elements per access (copy_lanes is 1, 2 or 4)", kGemmSchedule, tile.copyLanes);
  std::vector<std::string> acc = rec.leaves(s.accumulator);
  auto k = rec.split(s.accumulator, acc.back(), {tile.k});
  std::vector<std::string> accOrder = {k[0], k[1]};
  accOrder.insert(accOrder.end(), acc.begin(), acc.end() - 1);
  rec.reorder(s.accumulator, accOrder);
  // Each chunk's windows: the block's rows (columns) by the chunk, in the operand's axis order.
  int64_t threads = threadsZYX[0] * threadsZYX[1] * threadsZYX[2];
  int64_t rows = tile.x[1] * tile.x[2], columns = tile.y[1] * tile.y[2];
  int64_t dataLanes = copyLanesOf(tile.copyLanes, shape.dataReductionInnermost ? tile.k : rows, rows * tile.k, threads);
  int64_t otherLanes = copyLanesOf(tile.copyLanes, shape.otherReductionInnermost ? tile.k : columns, columns * tile.k, threads);
  copyCooperatively(rec, s.dataShared, s.accumulator, k[0], threadsZYX, dataLanes);
  copyCooperatively(rec, s.otherShared, s.accumulator, k[0], threadsZYX, otherLanes);
  TESSEL_CHECK(tile.stages >= 2 && tile.stages <= DoubleBufferStep::kMaxStages && (tile.doubleBuffer || tile.stages == 2),
               "{}: {} stages of copies{}", kGemmSchedule, tile.stages, tile.doubleBuffer ? "" : " without double buffering");
  if (tile.doubleBuffer)
    for (const std::string& shared : {s.dataShared, s.otherShared})
      rec.add(std::make_shared<DoubleBufferStep>(shared, int(tile.stages)));
  return k;
}

/// How a warp's fragment loads from one shared copy look (codegen's tessel_warp_mma): one load
/// instruction's 32 accesses, access `i` reading `lanes` contiguous elements from
/// `address(i, stride)` for a copy whose rows are `stride` elements apart (4 lanes: a float4 load
/// or an ldmatrix row of 16 bytes).
struct FragmentLoads {
  std::function<int64_t(int64_t, int64_t)> address;
  int64_t lanes = 1;
  /// The padded stride a multiple of this (and of lanes): rows that whole float4 copies fill.
  int64_t strideMultiple = 1;
};

/// Contiguous sub-tiles: lane 4g + t reads the copy at its group's row (or column) offset
/// `groupOffset(g)` and the reduction step `stepOfLane` x t (4 lanes: codegen's wide rows
/// operand, whose lane t holds steps 4t to 4t + 3 of every 16; the other operand then reads step
/// 4t + c in its c-th load).
FragmentLoads subTileLoads(bool reductionInnermost, std::function<int64_t(int64_t)> groupOffset, int64_t stepOfLane, int64_t lanes,
                           int64_t strideMultiple) {
  return {[=](int64_t lane, int64_t stride) {
            int64_t g = lane / kWarpColumns, step = stepOfLane * (lane % kWarpColumns);
            return reductionInnermost ? groupOffset(g) * stride + step : step * stride + groupOffset(g);
          },
          lanes, strideMultiple};
}

/// Interleaved lanes (GpuGemmTile::interleaveLanes): a fragment's 8 rows (or columns) are 8
/// neighbouring rows of the copy. Steps contiguous: ldmatrix, whose 8 row addresses of 16 bytes
/// a phase are rows 0 to 7 (4 steps each; the column fragment's rows permuted, the same set).
/// Otherwise lane 4g + t reads step t of the fragment's row (column) g, one element.
FragmentLoads interleavedLoads(bool reductionInnermost) {
  if (reductionInnermost) return {[](int64_t access, int64_t stride) { return (access % 8) * stride + 4 * (access / 16); }, 4, 4};
  return {[](int64_t lane, int64_t stride) { return (lane % kWarpColumns) * stride + lane / kWarpColumns; }, 1, 1};
}

/// The padding of a shared copy's row stride (0 to 31 elements; a multiple of the lanes' where
/// the loads are wide, so every row stays aligned) after which one load instruction of a warp
/// touches each bank the fewest times. NVIDIA's shared memory has 32 banks of 4 bytes, and a
/// warp's 16-byte loads are served eight lanes at a time (CUDA C++ Programming Guide, "Shared
/// Memory"); the lowest padding among the best wins.
int64_t conflictFreePadding(int64_t naturalStride, const FragmentLoads& loads) {
  const int64_t lanesServed = loads.lanes == 4 ? 8 : kWarpRows * kWarpColumns;
  int64_t best = -1, bestDegree = 0;
  for (int64_t pad = 0; pad < 32; ++pad) {
    int64_t stride = naturalStride + pad;
    if (stride % loads.lanes != 0 || stride % loads.strideMultiple != 0) continue;
    int64_t degree = 0;
    for (int64_t first = 0; first < kWarpRows * kWarpColumns; first += lanesServed) {
      std::array<int64_t, 32> banks{};
      for (int64_t lane = first; lane < first + lanesServed; ++lane) {
        int64_t address = loads.address(lane, stride);
        for (int64_t e = 0; e < loads.lanes; ++e) degree = std::max(degree, ++banks[size_t((address + e) % 32)]);
      }
    }
    if (best < 0 || degree < bestDegree) {
      bestDegree = degree;
      best = pad;
    }
  }
  return best;
}

/// Pads the stride of a shared copy's second-innermost axis by `pad` elements (storage_align).
void padSharedRows(Recorder& rec, const std::string& shared, int64_t naturalStride, int64_t pad) {
  if (pad == 0) return;
  std::vector<std::string> axes = rec.leaves(shared);
  rec.add(std::make_shared<StorageAlignStep>(shared, axes[axes.size() - 2], 32, (naturalStride + pad) % 32));
}

/// The rows of a tensor-core tile's two shared copies: their natural length (the chunk where the
/// operand's steps are contiguous, else the block's rows or columns) and the padded one.
struct CopyRows {
  int64_t dataNatural = 0, dataPadded = 0, otherNatural = 0, otherPadded = 0;
};

/// Padded so that a warp's fragment loads spread over the banks. Contiguous sub-tiles: lane
/// 4g + t reads rows g x (rows per thread) of the data and columns (g / 2) x (columns per thread)
/// + g % 2 of the other operand; data whose steps are contiguous, in chunks of 16 steps, is read a
/// float4 a row (codegen's wide rows operand: rows a multiple of 4 elements apart), and the other
/// operand then at step 4t + c. Interleaved lanes: interleavedLoads.
CopyRows tensorCoreCopyRows(const GpuGemmShape& shape, const GpuGemmTile& tile) {
  int64_t rowsPerThread = tile.x[2], columnsPerThread = tile.y[2];
  CopyRows r;
  r.dataNatural = shape.dataReductionInnermost ? tile.k : tile.x[1] * tile.x[2];
  r.otherNatural = shape.otherReductionInnermost ? tile.k : tile.y[1] * tile.y[2];
  bool wideData = shape.dataReductionInnermost && tile.k % 16 == 0;
  int64_t otherMultiple = tile.alignCopyRows ? tile.copyLanes : 1;
  FragmentLoads dataLoads = tile.interleaveLanes ? interleavedLoads(shape.dataReductionInnermost)
                                                 : subTileLoads(shape.dataReductionInnermost, [&](int64_t g) { return g * rowsPerThread; },
                                                                wideData ? 4 : 1, wideData ? 4 : 1, 1);
  FragmentLoads otherLoads =
      tile.interleaveLanes ? interleavedLoads(shape.otherReductionInnermost)
                           : subTileLoads(shape.otherReductionInnermost, [&](int64_t g) { return (g / 2) * columnsPerThread + g % 2; },
                                          wideData ? 4 : 1, 1, otherMultiple);
  otherLoads.strideMultiple = std::lcm(otherLoads.strideMultiple, otherMultiple);
  r.dataPadded = r.dataNatural + conflictFreePadding(r.dataNatural, dataLoads);
  r.otherPadded = r.otherNatural + conflictFreePadding(r.otherNatural, otherLoads);
  return r;
}

/// The bytes of shared memory a tensor-core tile's copies take: both operands' chunks, padded,
/// in every stage.
int64_t tensorCoreCopyBytes(const GpuGemmShape& shape, const GpuGemmTile& tile) {
  const CopyRows r = tensorCoreCopyRows(shape, tile);
  int64_t blockRows = tile.x[1] * tile.x[2], blockColumns = tile.y[1] * tile.y[2];
  int64_t data = shape.dataReductionInnermost ? blockRows * r.dataPadded : tile.k * r.dataPadded;
  int64_t other = shape.otherReductionInnermost ? blockColumns * r.otherPadded : tile.k * r.otherPadded;
  // Each copy a buffer of its own, rounded as lowering allocates it.
  int64_t stages = tile.doubleBuffer ? tile.stages : 1;
  return passes::sharedBufferBytes(data * int64_t(sizeof(float)) * stages) + passes::sharedBufferBytes(other * int64_t(sizeof(float)) * stages);
}

/// gpuGemmTiles on tensor cores: rows [blocks, row warps, 8, per thread], columns [blocks,
/// column warps, 4, per thread]; threadIdx.x the fused 8 x 4 lanes, y the column warps, z the row
/// warps; the accumulator's chunk loop tensorized.
GpuTileSchedule gpuTensorCoreTiles(const te::ComputeDAG& dag, const GpuGemmShape& shape, const GpuGemmTile& tile) {
  const char* intrinsic = ir::warpMmaIntrinsicName(*tile.tensorCores);
  TESSEL_CHECK(tile.x[1] % kWarpRows == 0 && tile.y[1] % kWarpColumns == 0 && tile.x[2] % 2 == 0 && tile.y[2] % 2 == 0,
               "{} on tensor cores ({}): tile_x [{}, {}, {}], tile_y [{}, {}, {}]: a warp is 8 row threads by 4 column threads, each "
               "an even number of rows and columns",
               kGemmSchedule, intrinsic, tile.x[0], tile.x[1], tile.x[2], tile.y[0], tile.y[1], tile.y[2]);
  // A ragged last tile computes past the product (the accumulator reads only the shared copies,
  // schedule::buildLoopNest leaves it unguarded) and stores only what is inside.
  checkTileCovers(kGemmSchedule, "x", tile.x, shape.rows);
  checkTileCovers(kGemmSchedule, "y", tile.y, shape.columns);
  TESSEL_CHECK(tile.k % 8 == 0, "{} on tensor cores ({}): a chunk of {} is not a multiple of the instruction's 8 steps", kGemmSchedule,
               intrinsic, tile.k);
  Recorder rec(dag, /*deferBounds=*/true);
  GemmStages stages = stageGemm(rec, dag, shape);
  // Rows of the copies padded so that a warp's fragment loads spread over the banks.
  const CopyRows rows = tensorCoreCopyRows(shape, tile);
  padSharedRows(rec, stages.dataShared, rows.dataNatural, rows.dataPadded - rows.dataNatural);
  padSharedRows(rec, stages.otherShared, rows.otherNatural, rows.otherPadded - rows.otherNatural);

  // Rows [blocks, row warps, 8 lanes, per thread] (or per thread, then the lanes, interleaved),
  // columns likewise with 4 lanes; the lanes fused into threadIdx.x outside the thread's own loops.
  int64_t rowWarps = tile.x[1] / kWarpRows, columnWarps = tile.y[1] / kWarpColumns;
  std::vector<int64_t> rowSplit = {rowWarps, kWarpRows, tile.x[2]}, columnSplit = {columnWarps, kWarpColumns, tile.y[2]};
  if (tile.interleaveLanes) {
    std::swap(rowSplit[1], rowSplit[2]);
    std::swap(columnSplit[1], columnSplit[2]);
  }
  auto loops = tileGemmOutput(rec, stages.out, rowSplit, columnSplit);
  rec.annotate(stages.out, loops.x[1], Annotation::ThreadZ);
  rec.annotate(stages.out, loops.y[1], Annotation::ThreadY);
  if (tile.interleaveLanes) {
    std::vector<std::string> order = rec.leaves(stages.out);
    auto at = [&](const std::string& name) { return std::find(order.begin(), order.end(), name); };
    std::iter_swap(at(loops.x[2]), at(loops.x[3]));
    std::iter_swap(at(loops.y[2]), at(loops.y[3]));
    rec.reorder(stages.out, order);
    std::swap(loops.x[2], loops.x[3]);
    std::swap(loops.y[2], loops.y[3]);
  }
  std::string lanes = rec.fuse(stages.out, {loops.x[2], loops.y[2]});
  rec.annotate(stages.out, lanes, Annotation::ThreadX);
  addUnrollPragmas(rec, stages.out, loops.outermost, tile.autoUnrollMaxStep, tile.unrollExplicit);
  rec.computeAt(stages.accumulator, stages.out, lanes);
  auto k = chunkTheReduction(rec, stages, shape, tile, {rowWarps, columnWarps, kWarpRows * kWarpColumns});
  rec.add(std::make_shared<TensorizeStep>(stages.accumulator, k[1], intrinsic));
  return {rec.steps, rec.finish()};
}

}  // namespace

GpuTileSchedule gpuGemmTiles(const te::ComputeDAG& dag, const GpuGemmTile& tile) {
  GpuGemmShape shape = gpuGemmShapeOf(dag);
  if (tile.tensorCores) return gpuTensorCoreTiles(dag, shape, tile);
  checkTileCovers(kGemmSchedule, "x", tile.x, shape.rows);
  checkTileCovers(kGemmSchedule, "y", tile.y, shape.columns);
  checkEveryThreadWorks("x", tile.x, shape.rows);
  checkEveryThreadWorks("y", tile.y, shape.columns);
  // A chunk that does not divide the reduction leaves a last chunk whose copies and products
  // are guarded (the copies' domain guards, the accumulator's reduction guard).
  TESSEL_CHECK(tile.k >= 1 && tile.k <= shape.reduction, "{}: a chunk of {} for a reduction of {}", kGemmSchedule, tile.k,
               shape.reduction);
  Recorder rec(dag, /*deferBounds=*/true);
  GemmStages stages = stageGemm(rec, dag, shape);
  auto loops = tileGemmOutput(rec, stages.out, {tile.x[1], tile.x[2]}, {tile.y[1], tile.y[2]});
  rec.annotate(stages.out, loops.x[1], Annotation::ThreadY);
  rec.annotate(stages.out, loops.y[1], Annotation::ThreadX);
  addUnrollPragmas(rec, stages.out, loops.outermost, tile.autoUnrollMaxStep, tile.unrollExplicit);
  rec.computeAt(stages.accumulator, stages.out, loops.y[1]);
  chunkTheReduction(rec, stages, shape, tile, {1, tile.x[1], tile.y[1]});
  return {rec.steps, rec.finish()};
}

GpuGemmTile defaultGpuGemmTile(const GpuGemmShape& shape, int64_t multiprocessors, int64_t maxThreadsPerBlock, int64_t warpSize) {
  GpuGemmTile best;
  using Key = std::tuple<bool, bool, bool, int64_t, int64_t, int64_t, int64_t, double>;
  Key bestKey{};
  bool found = false;
  for (int64_t rowThreads : {16, 8, 4, 2, 1})
    for (int64_t columnThreads : {16, 8, 4, 2, 1})
      for (int64_t rows : {4, 2, 1})
        for (int64_t columns : {4, 2, 1}) {
          if (rowThreads * columnThreads > maxThreadsPerBlock) continue;
          const auto [rowBlocks, columnBlocks, covered] = coverOf(shape, rowThreads * rows, columnThreads * columns);
          if (!everyThreadWorks({rowBlocks, rowThreads, rows}, shape.rows) ||
              !everyThreadWorks({columnBlocks, columnThreads, columns}, shape.columns))
            continue;
          int64_t blocks = shape.stack * rowBlocks * columnBlocks;
          // Enough blocks for every multiprocessor first, then little padding, then two warps
          // per block, then outputs per thread (each operand element loaded feeds that many),
          // then threads per block, then square blocks and sub-tiles (for the same outputs, their
          // copies and loads read the fewest elements).
          Key key{multiprocessors <= 0 || blocks >= 2 * multiprocessors,
                  covered >= 0.8,
                  rowThreads * columnThreads >= 2 * std::max<int64_t>(warpSize, 1),
                  rows * columns,
                  rowThreads * columnThreads,
                  std::min(rowThreads, columnThreads),
                  std::min(rows, columns),
                  covered};
          if (found && key <= bestKey) continue;
          found = true;
          bestKey = key;
          best.x = {rowBlocks, rowThreads, rows};
          best.y = {columnBlocks, columnThreads, columns};
        }
  TESSEL_CHECK(found, "{}: no tile fits blocks of {} threads", kGemmSchedule, maxThreadsPerBlock);
  // Unrolled in the IR up to 256 steps: the sub-tile's accumulators stay in registers.
  best.autoUnrollMaxStep = 256;
  best.unrollExplicit = true;
  best.k = longestChunk(shape.reduction);
  return best;
}

}  // namespace tessel::ops

namespace tessel::ops {

namespace {

/// Three TF32 products a step (measured before interleaved lanes, which it has not been against):
/// warps of contiguous sub-tiles of 2 or 4 x 2 or 4 outputs, 1 to 4 warps along each axis,
/// preferred as the fp32 tile is (two blocks per multiprocessor, then blocks covering 80% real
/// outputs or more, then outputs per thread, then threads per block, then square warp grids);
/// the longest multiple of 8 dividing the reduction up to 64 whose copies fit (fewer chunks,
/// fewer barriers: the instructions leave the loop over a chunk short).
std::optional<GpuGemmTile> subTileTensorCoreTile(const GpuGemmShape& shape, ir::WarpMmaKind kind, int64_t multiprocessors,
                                                 int64_t maxThreadsPerBlock, int64_t maxSharedMemoryPerBlock) {
  std::optional<GpuGemmTile> best;
  using Key = std::tuple<bool, bool, int64_t, int64_t, int64_t>;
  Key bestKey{};
  for (int64_t rowWarps : {1, 2, 4})
    for (int64_t columnWarps : {1, 2, 4})
      for (int64_t rows : {4, 2})
        for (int64_t columns : {4, 2}) {
          int64_t rowThreads = rowWarps * kWarpRows, columnThreads = columnWarps * kWarpColumns;
          if (rowThreads * columnThreads > maxThreadsPerBlock) continue;
          const auto [rowBlocks, columnBlocks, covered] = coverOf(shape, rowThreads * rows, columnThreads * columns);
          int64_t blocks = shape.stack * rowBlocks * columnBlocks;
          // The longest chunk whose copies (with up to 32 elements of padding a row) fit.
          int64_t chunk = 0;
          for (int64_t c = 64; c >= 8 && chunk == 0; c -= 8)
            if (shape.reduction % c == 0 && (rowThreads * rows + columnThreads * columns) * (c + 32) * 4 <= maxSharedMemoryPerBlock)
              chunk = c;
          if (chunk == 0) continue;
          // As the fp32 tile: two blocks per multiprocessor, little padding (ViT's 197 tokens),
          // then outputs per thread, then threads per block, then square warp grids.
          Key key{blocks >= 2 * multiprocessors, covered >= 0.8, rows * columns, rowThreads * columnThreads, std::min(rowWarps, columnWarps)};
          if (best && key <= bestKey) continue;
          bestKey = key;
          GpuGemmTile tile;
          tile.x = {rowBlocks, rowThreads, rows};
          tile.y = {columnBlocks, columnThreads, columns};
          tile.k = chunk;
          tile.autoUnrollMaxStep = 256;
          tile.tensorCores = kind;
          best = tile;
        }
  return best;
}

/// One TF32 product a step: interleaved lanes (GpuGemmTile::interleaveLanes).
std::optional<GpuGemmTile> interleavedTensorCoreTile(const GpuGemmShape& shape, ir::WarpMmaKind kind, int64_t multiprocessors,
                                                     int64_t maxThreadsPerBlock, int64_t maxSharedMemoryPerBlock) {
  if (maxThreadsPerBlock < 2 * kWarpRows * kWarpColumns) return std::nullopt;
  // Two warps a block side by side along the columns, interleaved lanes; each lane 4 x 8, 2 x 8
  // or 2 x 4 outputs, the largest whose launch has a block for every multiprocessor (else the
  // smallest). On an H200 with one TF32 product a step (bench_gpu_gemm, 2026-12-03, against
  // every grid of 1 to 4 warps each way with lanes of 2 to 8 x 4 or 8, chunks of 32 and 64): the
  // 4 x 8 lanes ran BERT-base's 128 x 2304 x 768 product in 12.6 us (the sweep's best 11.5),
  // 128 x 3072 x 768 in 13.9 (12.0), ViT-B/16's 197-row ones in 14.8 (14.1) and 19.5 (19.2);
  // 2 x 8 lanes ViT's 197 x 768 x 768 and x 3072 in 9.9 and 29.9 (the best); 2 x 4 lanes
  // BERT's 128 x 768 x 768 and x 3072 in 8.4 and 22.6, its attention heads in 4.0 and 3.5 (the
  // best). Then the longest chunk of 64, 32, 16 or 8 steps that divides the reduction and whose
  // copies fit in the shared memory a block may declare.
  const std::array<std::array<int64_t, 2>, 3> lanes = {{{4, 8}, {2, 8}, {2, 4}}};
  // A block wider than the product along an axis would compute past a region its copies cannot
  // hold (kept at the whole axis): the lanes' product would need guards, which the instruction
  // cannot have.
  std::optional<GpuGemmTile> chosen;
  for (size_t i = 0; i < lanes.size() && !chosen; ++i) {
    GpuGemmTile tile;
    int64_t blockRows = kWarpRows * lanes[i][0], blockColumns = 2 * kWarpColumns * lanes[i][1];
    if (blockRows > shape.rows || blockColumns > shape.columns) continue;
    const auto [rowBlocks, columnBlocks, covered] = coverOf(shape, blockRows, blockColumns);
    int64_t blocks = shape.stack * rowBlocks * columnBlocks;
    if (blocks < multiprocessors && i + 1 < lanes.size()) continue;
    tile.x = {rowBlocks, kWarpRows, lanes[i][0]};
    tile.y = {columnBlocks, 2 * kWarpColumns, lanes[i][1]};
    tile.autoUnrollMaxStep = 256;
    tile.tensorCores = kind;
    tile.interleaveLanes = true;
    for (int64_t chunk : {64, 32, 16, 8}) {
      tile.k = chunk;
      if (shape.reduction % chunk == 0 && tensorCoreCopyBytes(shape, tile) <= maxSharedMemoryPerBlock) {
        chosen = tile;
        break;
      }
    }
  }
  return chosen;
}

}  // namespace

std::optional<GpuGemmTile> defaultGpuTensorCoreTile(const GpuGemmShape& shape, ir::WarpMmaKind kind, int64_t multiprocessors,
                                                    int64_t maxThreadsPerBlock, int64_t maxSharedMemoryPerBlock, bool onlyWhereFaster) {
  if (shape.reduction % 8 != 0 || multiprocessors <= 0) return std::nullopt;
  std::optional<GpuGemmTile> best = kind == ir::WarpMmaKind::Tf32
                                        ? interleavedTensorCoreTile(shape, kind, multiprocessors, maxThreadsPerBlock, maxSharedMemoryPerBlock)
                                        : subTileTensorCoreTile(shape, kind, multiprocessors, maxThreadsPerBlock, maxSharedMemoryPerBlock);
  if (!best) return std::nullopt;
  int64_t blocks = shape.stack * best->x[0] * best->y[0], warps = blocks * (best->x[1] / kWarpRows) * (best->y[1] / kWarpColumns);
  bool exact = best->x[0] * best->x[1] * best->x[2] == shape.rows && best->y[0] * best->y[1] * best->y[2] == shape.columns;
  const int64_t minWarps = exact || kind == ir::WarpMmaKind::Tf32 ? kTensorCoreMinWarpsPerMultiprocessor
                                                                   : kTensorCoreMinWarpsPerMultiprocessorRagged;
  // One TF32 product a step needs no next chunk to hide its work behind (BERT-base's one-chunk
  // attention heads with interleaved lanes: 4.0 us against the fp32 tile's 4.7); three do.
  bool fewChunks = kind == ir::WarpMmaKind::Tf32x3 && shape.reduction < kTensorCoreMinChunks * best->k;
  if (onlyWhereFaster && (warps < minWarps * multiprocessors || fewChunks)) return std::nullopt;
  return best;
}

}  // namespace tessel::ops
