#include "ops/GpuWinogradTiles.h"

#include <algorithm>
#include <tuple>

#include "ops/Schedules.h"
#include "passes/GpuLaunch.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {

constexpr const char* kWinogradSchedule = "GPU Winograd tiles";

/// The largest divisor of `n` that is at most `cap` (1 at least).
int64_t largestDivisor(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, std::max<int64_t>(cap, 1)); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

/// The stage of `kind` in the DAG; Error naming the kind when there is none.
const te::OperationNode& stageOfKind(const te::ComputeDAG& dag, OpKind kind, const char* what) {
  for (const auto& op : dag.ops())
    if (traitsOf(*op).kind == kind) return *op;
  fail("{}: the function has no {} stage", kWinogradSchedule, what);
}

}  // namespace

bool gpuWinogradPointsAreABox(int64_t perThread, int alpha) {
  if (perThread < 1) return false;
  if (perThread <= alpha) return alpha % perThread == 0;
  return perThread % alpha == 0 && alpha % (perThread / alpha) == 0;
}

GpuWinogradShape gpuWinogradShapeOf(const te::ComputeDAG& dag) {
  auto anchor = findAnchorStage(dag);
  TESSEL_CHECK(anchor.has_value(), "{}: the function has no Winograd GEMM to tile", kWinogradSchedule);
  const auto& gemm = *dag.op(*anchor);
  TESSEL_CHECK(traitsOf(gemm).kind == OpKind::WinogradNchwGemm, "{}: the anchor '{}' is {}, not the NCHW Winograd GEMM",
               kWinogradSchedule, *anchor, traitsOf(gemm).tag.empty() ? "another operation" : traitsOf(gemm).tag);
  const auto& conv = stageOfKind(dag, OpKind::WinogradNchwOutput, "Winograd output");
  TESSEL_CHECK(dag.outputNames().size() == 1, "{}: the function has {} outputs; the tiles need exactly one", kWinogradSchedule,
               dag.outputNames().size());
  const std::string& out = dag.outputNames()[0];
  TESSEL_CHECK(dag.op(out)->shape == conv.shape, "{}: the output '{}' is not element-wise over '{}' (its shape differs)",
               kWinogradSchedule, out, conv.name);
  GpuWinogradShape s;
  s.gemm = gemm.name;
  s.input = stageOfKind(dag, OpKind::WinogradNchwInput, "Winograd input transform").name;
  s.outputRows = stageOfKind(dag, OpKind::WinogradNchwOutputRows, "Winograd output transform").name;
  for (const auto& access : te::ComputeDAG::accesses(gemm))
    if (access.producer != s.input) s.weight = access.producer;
  TESSEL_CHECK(!s.weight.empty(), "{}: '{}' reads no transformed weight", kWinogradSchedule, gemm.name);
  // gemm [alpha, alpha, K, N, tH, tW] over the input channels; output rows [m, alpha, ...].
  s.alpha = int(gemm.shape[0]);
  s.m = int(dag.op(s.outputRows)->shape[0]);
  s.outChannels = gemm.shape[2];
  s.batch = gemm.shape[3];
  s.tileRows = gemm.shape[4];
  s.tileColumns = gemm.shape[5];
  s.inChannels = gemm.reduction()->axes[0].extent;
  return s;
}

int64_t gpuWinogradSharedBytes(const GpuWinogradShape& s, const GpuWinogradTile& t) {
  int64_t points = int64_t(s.alpha) * s.alpha, channels = t.f[1] * t.f[2], tiles = t.y[1] * t.y[2] * t.x[1] * t.x[2];
  return passes::sharedBufferBytes(4 * points * channels * tiles) + passes::sharedBufferBytes(4 * points * t.rc * tiles) +
         passes::sharedBufferBytes(4 * points * t.rc * channels);
}

GpuTileSchedule gpuTiledWinograd(const te::ComputeDAG& dag, const GpuWinogradTile& tile) {
  GpuWinogradShape s = gpuWinogradShapeOf(dag);
  int64_t points = int64_t(s.alpha) * s.alpha;
  TESSEL_CHECK(tile.b[0] >= 1 && tile.b[0] * tile.b[1] == points && gpuWinogradPointsAreABox(tile.b[1], s.alpha),
               "{}: tile_b [{}, {}] does not share out the {} transform points as whole rows of {} or parts of one",
               kWinogradSchedule, tile.b[0], tile.b[1], points, s.alpha);
  checkTileCovers(kWinogradSchedule, "f", tile.f, s.outChannels);
  checkTileCovers(kWinogradSchedule, "y", tile.y, s.tileRows);
  checkTileCovers(kWinogradSchedule, "x", tile.x, s.tileColumns);
  TESSEL_CHECK(tile.rc >= 1 && s.inChannels % tile.rc == 0, "{}: chunks of {} input channels do not divide the {} channels",
               kWinogradSchedule, tile.rc, s.inChannels);
  const int64_t threads = tile.threads();
  Recorder rec(dag, /*deferBounds=*/true);
  const std::string out = dag.outputNames()[0];

  // The stages: a thread's sums in registers, the block's M in shared memory (read by the
  // inverse transform), the chunks of V (computed as they are staged) and of U.
  std::string gemmLocal = rec.cacheWrite(s.gemm);
  std::string gemmShared = rec.cacheRead(s.gemm, "shared", {s.outputRows});
  rec.computeInline(s.gemm);
  std::string inputShared = rec.cacheRead(s.input, "shared", {gemmLocal});
  std::string weightShared = rec.cacheRead(s.weight, "shared", {gemmLocal});
  // The padding and the data pack inline into V's shared copy, the convolution's output into
  // the epilogue's; A^T M stays a per-thread stage of the inverse.
  for (auto it = dag.ops().rbegin(); it != dag.ops().rend(); ++it) {
    const auto& op = **it;
    if (op.isPlaceholder() || op.reduction() || dag.isOutput(op.name) || op.name == s.outputRows || op.name == s.gemm) continue;
    rec.computeInline(op.name);
  }

  // The output: blocks over the batch and channels (z), the rows (y) and columns (x) of tiles;
  // inside, one thread per channel and tile of the block, its m x m outputs unrolled.
  std::vector<std::string> loops = rec.leaves(out);  // [n, k, h, w]
  auto rows = rec.split(out, loops[2], {s.m});       // [tile row, row in the tile]
  auto columns = rec.split(out, loops[3], {s.m});
  auto channels = rec.split(out, loops[1], {tile.f[1] * tile.f[2]});
  auto tileRows = rec.split(out, rows[0], {tile.y[1] * tile.y[2]});
  auto tileColumns = rec.split(out, columns[0], {tile.x[1] * tile.x[2]});
  rec.reorder(out, {loops[0], channels[0], tileRows[0], tileColumns[0], channels[1], tileRows[1], tileColumns[1], rows[1], columns[1]});
  std::string blocksZ = rec.fuse(out, {loops[0], channels[0]});
  rec.annotate(out, blocksZ, Annotation::BlockZ);
  rec.annotate(out, tileRows[0], Annotation::BlockY);
  rec.annotate(out, tileColumns[0], Annotation::BlockX);
  addUnrollPragmas(rec, out, blocksZ, tile.autoUnrollMaxStep, tile.unrollExplicit);
  std::string blockTiles = rec.fuse(out, {channels[1], tileRows[1], tileColumns[1]});
  auto perThread = rec.split(out, blockTiles, {largestDivisor(tile.blockOutputs(), threads)});  // [serial, thread]
  rec.reorder(out, {perThread[1], perThread[0], rows[1], columns[1]});
  rec.annotate(out, perThread[1], Annotation::ThreadX);
  rec.annotate(out, rows[1], Annotation::Unroll);
  rec.annotate(out, columns[1], Annotation::Unroll);
  rec.computeAt(s.outputRows, out, perThread[0]);
  std::vector<std::string> rowLoops = rec.leaves(s.outputRows);  // [i, nu, k, n, th, tw]: one tile's
  rec.annotate(s.outputRows, rowLoops[0], Annotation::Unroll);
  rec.annotate(s.outputRows, rowLoops[1], Annotation::Unroll);

  // The block's M: threads over the transform points, channels and tiles, each storing its
  // sub-tile of sums.
  rec.computeAt(gemmShared, out, tileColumns[0]);
  std::vector<std::string> sums = rec.leaves(gemmShared);  // [eps, nu, k, n, th, tw]
  std::vector<std::string> threadLoops, inner;
  if (tile.b[1] <= s.alpha) {
    auto nu = rec.split(gemmShared, sums[1], {tile.b[1]});
    threadLoops = {sums[0], nu[0]};
    inner = {nu[1]};
  } else {
    auto eps = rec.split(gemmShared, sums[0], {tile.b[1] / s.alpha});
    threadLoops = {eps[0]};
    inner = {eps[1], sums[1]};
  }
  auto k = rec.split(gemmShared, sums[2], {tile.f[2]});
  auto th = rec.split(gemmShared, sums[4], {tile.y[2]});
  auto tw = rec.split(gemmShared, sums[5], {tile.x[2]});
  threadLoops.insert(threadLoops.end(), {k[0], th[0], tw[0]});
  inner.insert(inner.end(), {k[1], sums[3], th[1], tw[1]});
  std::vector<std::string> order = threadLoops;
  order.insert(order.end(), inner.begin(), inner.end());
  rec.reorder(gemmShared, order);
  std::string gemmThreads = rec.fuse(gemmShared, threadLoops);
  rec.annotate(gemmShared, gemmThreads, Annotation::ThreadX);
  rec.computeAt(gemmLocal, gemmShared, gemmThreads);

  // The reduction in chunks: the chunk loop outside, the sub-tile inside.
  std::vector<std::string> acc = rec.leaves(gemmLocal);  // [eps, nu, k, n, th, tw, rc]
  auto rc = rec.split(gemmLocal, acc[6], {tile.rc});
  std::vector<std::string> accOrder = {rc[0], rc[1]};
  accOrder.insert(accOrder.end(), acc.begin(), acc.begin() + 6);
  rec.reorder(gemmLocal, accOrder);

  // A chunk of V: one thread per input channel and tile, its alpha x alpha points unrolled
  // (the transform's rows fold to constants, the tile's inputs are loaded once for all).
  rec.computeAt(inputShared, gemmLocal, rc[0]);
  std::vector<std::string> pack = rec.leaves(inputShared);  // [eps, nu, c, n, th, tw]
  rec.reorder(inputShared, {pack[2], pack[3], pack[4], pack[5], pack[0], pack[1]});
  std::string packTiles = rec.fuse(inputShared, {pack[2], pack[3], pack[4], pack[5]});
  auto packThreads = rec.split(inputShared, packTiles, {threads});
  rec.annotate(inputShared, packThreads[1], Annotation::ThreadX);
  rec.annotate(inputShared, pack[0], Annotation::Unroll);
  rec.annotate(inputShared, pack[1], Annotation::Unroll);
  // A chunk of U, copied in element order (neighbouring threads, neighbouring channels).
  rec.computeAt(weightShared, gemmLocal, rc[0]);
  std::string weights = rec.fuse(weightShared, rec.leaves(weightShared));
  auto weightThreads = rec.split(weightShared, weights, {threads});
  rec.annotate(weightShared, weightThreads[1], Annotation::ThreadX);
  return {rec.steps, rec.finish()};
}

GpuWinogradTile defaultGpuWinogradTile(const GpuWinogradShape& s, const GpuScheduleOptions& options) {
  // The block: up to 8 tiles (a row of them where it is short) and 32 channels, so that each
  // transformed input feeds 32 channels' GEMMs before the next block transforms it again; a
  // thread: alpha points (one row of M) x up to 4 channels x up to 2 tiles in registers.
  int64_t tw = largestDivisor(s.tileColumns, 8), th = largestDivisor(s.tileRows, std::max<int64_t>(1, 8 / tw));
  int64_t channels = largestDivisor(s.outChannels, 32), rc = largestDivisor(s.inChannels, 8);
  int64_t channelsPerThread = 4, tilesPerThread = 2;  // caps: the parts are divisors of the block's
  auto tileOf = [&] {
    int64_t f2 = largestDivisor(channels, channelsPerThread), x2 = largestDivisor(tw, tilesPerThread);
    GpuWinogradTile t;
    t.b = {s.alpha, s.alpha};
    t.f = {(s.outChannels + channels - 1) / channels, channels / f2, f2};
    t.y = {(s.tileRows + th - 1) / th, th, 1};
    t.x = {(s.tileColumns + tw - 1) / tw, tw / x2, x2};
    t.rc = rc;
    t.autoUnrollMaxStep = 128;
    t.unrollExplicit = true;
    return t;
  };
  int64_t maxThreads = std::min(options.maxThreadsPerBlock, 2 * options.threadsPerBlock);
  auto fits = [&] {
    GpuWinogradTile t = tileOf();
    return t.threads() <= maxThreads && gpuWinogradSharedBytes(s, t) <= options.maxSharedMemoryPerBlock;
  };
  // Smaller chunks first (they cost a barrier each), then fewer channels, then fewer tiles.
  while (!fits()) {
    if (rc > 2) rc = largestDivisor(s.inChannels, rc / 2);
    else if (channels > channelsPerThread) channels = largestDivisor(s.outChannels, channels / 2);
    else if (th > 1) th = largestDivisor(s.tileRows, th / 2);
    else if (tw > 1) tw = largestDivisor(s.tileColumns, tw / 2);
    else if (rc > 1) rc = 1;
    else if (channels > 1) channels = largestDivisor(s.outChannels, channels / 2);
    else break;  // one channel and tile per block: the smallest there is
  }
  // Where the device says how many multiprocessors it has and the launch gives them fewer than
  // two blocks each (the deep layers' small images): first fewer outputs per thread (more
  // threads on the same box), then fewer channels per block, down to 16 (below, the data pack
  // each block repeats would cost more than the GEMM it feeds) and 64 threads a block.
  auto blocks = [&] {
    GpuWinogradTile t = tileOf();
    return s.batch * t.f[0] * t.y[0] * t.x[0];
  };
  auto keeps = [&](auto change) {
    auto saved = std::tuple{channels, channelsPerThread, tilesPerThread};
    change();
    if (fits() && tileOf().threads() >= 64) return true;
    std::tie(channels, channelsPerThread, tilesPerThread) = saved;
    return false;
  };
  while (options.minBlocks > 0 && blocks() < options.minBlocks) {
    if (tilesPerThread > 1 && keeps([&] { tilesPerThread = 1; })) continue;
    if (channelsPerThread > 2 && keeps([&] { channelsPerThread = 2; })) continue;
    if (channels > 16 && keeps([&] { channels = largestDivisor(s.outChannels, channels / 2); })) continue;
    break;
  }
  // Fewer channels leave shared memory for longer chunks again (fewer barriers), up to 8.
  for (int64_t longer = largestDivisor(s.inChannels, 8); longer > rc; longer = largestDivisor(s.inChannels, longer - 1)) {
    int64_t saved = rc;
    rc = longer;
    if (fits()) break;
    rc = saved;
  }
  return tileOf();
}

}  // namespace tessel::ops
