#include "tune/ansor/Features.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>

#include "ir/Mutator.h"
#include "schedule/BoundInference.h"
#include "tune/autotvm/LoopSummary.h"

namespace tessel::tune::ansor {

using namespace schedule;
using autotvm::StageSummary;
using autotvm::SummaryAccess;
using ir::Expr;
using ir::ExprKind;

namespace {

float logScale(double x) { return float(std::log2(1.0 + std::max(0.0, x))); }

constexpr double kCacheLineBytes = 64;
constexpr size_t kBuffers = 5, kPerBuffer = 14, kIntensitySamples = 10;

/// Float arithmetic per element of a stage's body (inlined producers included), by kind:
/// add/sub, mul, div/mod, compare/min/max, math calls, selects. Index arithmetic is integer
/// and not counted.
std::array<double, 6> arithmeticPerElement(const State& state, const std::string& stage) {
  std::array<double, 6> counts{};
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e.kind() == ExprKind::ProducerLoad) return;  // its indices are integer arithmetic
    if (e.type().isFloat()) {
      switch (e.kind()) {
        case ExprKind::Add: case ExprKind::Sub: ++counts[0]; break;
        case ExprKind::Mul: ++counts[1]; break;
        case ExprKind::Div: case ExprKind::Mod: case ExprKind::FloorDiv: case ExprKind::FloorMod: ++counts[2]; break;
        case ExprKind::Min: case ExprKind::Max: ++counts[3]; break;
        case ExprKind::Call: ++counts[4]; break;
        case ExprKind::Select: case ExprKind::IfThenElse: ++counts[5]; break;
        case ExprKind::Reduce: ++counts[0]; break;  // the accumulation
        default: break;
      }
    } else if (e.kind() >= ExprKind::EQ && e.kind() <= ExprKind::GE) {
      ++counts[3];
    }
    ir::forEachChild(e, walk);
  };
  walk(inlinedBody(state, stage));
  return counts;
}

/// Per loop of a summary (outermost first), for one access: distinct bytes and accesses under
/// the loop (the loop included), and the loop's stride in bytes.
struct Footprint {
  std::vector<double> distinctBytes, accesses, strideBytes;
};

Footprint footprint(const StageSummary& stage, const SummaryAccess& access) {
  size_t n = stage.loops.size();
  Footprint f{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
  std::vector<double> span(access.shape.size(), 1.0);
  double below = 1;
  for (size_t i = n; i-- > 0;) {
    double extent = double(stage.loops[i].extent);
    below *= extent;
    double distinct = 1, stride = 0;
    for (size_t d = 0; d < span.size(); ++d) {
      double c = double(access.coefficients[i][d]);
      stride += c * double(access.flatStrides[d]);
      span[d] = std::min(double(access.shape[d]), span[d] + std::abs(c) * (extent - 1));
      distinct *= span[d];
    }
    f.distinctBytes[i] = distinct * double(access.elementBytes);
    f.accesses[i] = below;
    f.strideBytes[i] = std::abs(stride) * double(access.elementBytes);
  }
  return f;
}

bool movesThrough(const SummaryAccess& access, size_t loop) {
  for (int64_t c : access.coefficients[loop])
    if (c != 0) return true;
  return false;
}

void bufferFeatures(const StageSummary& stage, const SummaryAccess& access, bool reduction, float* out) {
  Footprint f = footprint(stage, access);
  size_t n = stage.loops.size();
  double bytes = n ? f.accesses[0] * double(access.elementBytes) : double(access.elementBytes);
  double distinct = n ? f.distinctBytes[0] : double(access.elementBytes);
  double innerStride = n ? f.strideBytes[n - 1] : 0;
  // A line per access when the innermost loop jumps a line or more, else one per line's worth.
  double lines = n ? f.accesses[0] * std::min(1.0, std::max(innerStride, 1.0) / kCacheLineBytes) : 1;
  int type = access.isStore ? (reduction ? 2 : 1) : 0;
  out[type] = 1;
  out[3] = logScale(bytes);
  out[4] = logScale(distinct);
  out[5] = logScale(lines);
  out[6] = logScale(std::ceil(distinct / kCacheLineBytes));
  // Reuse: the innermost loop (extent > 1) that does not move through the buffer.
  size_t reuseLoop = n;
  for (size_t i = n; i-- > 0;)
    if (stage.loops[i].extent > 1 && !movesThrough(access, i)) {
      reuseLoop = i;
      break;
    }
  out[reuseLoop < n ? 7 : 8] = 1;
  if (reuseLoop < n) {
    double distanceIterations = reuseLoop + 1 < n ? f.accesses[reuseLoop + 1] : 1;
    double distanceBytes = reuseLoop + 1 < n ? f.distinctBytes[reuseLoop + 1] : double(access.elementBytes);
    out[9] = logScale(distanceIterations);
    out[10] = logScale(distanceBytes);
    out[11] = logScale(double(stage.loops[reuseLoop].extent));
  }
  out[12] = logScale(innerStride);
  out[13] = logScale(n ? f.accesses[0] / std::max(1.0, distinct / double(access.elementBytes)) : 1);  // overall reuse ratio
}

/// The loops bound to blockIdx.x/y/z, threadIdx.x/y/z and vthread (the product of each
/// binding's extents), whether any is bound, and whether the stage is in shared memory.
void gpuFeatures(const StageSummary& summary, const Stage& stage, float* out) {
  static const Annotation bindings[] = {Annotation::BlockX,  Annotation::BlockY,  Annotation::BlockZ, Annotation::ThreadX,
                                        Annotation::ThreadY, Annotation::ThreadZ, Annotation::VThread};
  bool bound = false;
  for (size_t b = 0; b < std::size(bindings); ++b) {
    double extent = 1;
    bool found = false;
    for (const auto& loop : summary.loops)
      if (loop.annotation == bindings[b]) {
        extent *= double(loop.extent);
        found = true;
      }
    out[b] = found ? logScale(extent) : 0.0f;
    bound = bound || found;
  }
  out[7] = bound ? 1.0f : 0.0f;
  out[8] = stage.memoryScope == "shared" ? 1.0f : 0.0f;
}

std::vector<float> storeVector(const State& state, const StageSummary& summary, const target::CpuMachine* machine) {
  std::vector<float> out(kStoreFeatureLength, 0.0f);
  const Stage& stage = state.stage(summary.name);
  double iterations = summary.iterations();
  auto arithmetic = arithmeticPerElement(state, summary.name);
  double perElement = 0;
  for (size_t k = 0; k < arithmetic.size(); ++k) {
    out[k] = logScale(arithmetic[k] * iterations);
    perElement += arithmetic[k];
  }
  // Annotated loops: the innermost one's extent and the product of all, per annotation.
  double innermost[3] = {0, 0, 0}, product[3] = {1, 1, 1};
  for (const auto& loop : summary.loops) {
    int k = loop.annotation == Annotation::Vectorize ? 0 : loop.annotation == Annotation::Unroll ? 1
            : loop.annotation == Annotation::Parallel ? 2 : -1;
    if (k < 0) continue;
    innermost[k] = double(loop.extent);
    product[k] *= double(loop.extent);
  }
  for (int k = 0; k < 3; ++k) {
    out[6 + 2 * size_t(k)] = logScale(innermost[k]);
    out[7 + 2 * size_t(k)] = logScale(innermost[k] > 0 ? product[k] : 0);
  }
  out[12] = logScale(iterations);
  out[13] = logScale(double(stage.leaves.size()));
  double unroll = 0;
  for (int id : stage.leaves)
    for (auto& [key, value] : stage.iterator(id).pragmas)
      if (key == "auto_unroll_max_step") unroll = std::max(unroll, std::stod(value));
  out[14] = logScale(unroll);

  // Buffers: the five touching the most distinct bytes.
  std::vector<std::pair<double, size_t>> bySize;
  for (size_t a = 0; a < summary.accesses.size(); ++a) {
    Footprint f = footprint(summary, summary.accesses[a]);
    bySize.emplace_back(f.distinctBytes.empty() ? 0 : f.distinctBytes[0], a);
  }
  std::stable_sort(bySize.begin(), bySize.end(), [](auto& x, auto& y) { return x.first > y.first; });
  for (size_t b = 0; b < bySize.size() && b < kBuffers; ++b)
    bufferFeatures(summary, summary.accesses[bySize[b].second], stage.op->reduction() != nullptr, out.data() + 15 + b * kPerBuffer);

  // Arithmetic intensity from the innermost loop outwards, at evenly spaced depths.
  float* intensity = out.data() + 15 + kBuffers * kPerBuffer;
  size_t n = summary.loops.size();
  if (n > 0) {
    std::vector<Footprint> footprints;
    for (auto& access : summary.accesses) footprints.push_back(footprint(summary, access));
    for (size_t k = 0; k < kIntensitySamples; ++k) {
      size_t depth = n - 1 - std::min(n - 1, k * n / kIntensitySamples);  // innermost first
      double bytes = 0;
      for (auto& f : footprints) bytes += f.distinctBytes[depth];
      intensity[k] = logScale(perElement * footprints.front().accesses[depth] / std::max(bytes, 1.0));
    }
  }
  // Allocation and outer scope: the loops above the stage's own belong to the stages it is in.
  float* rest = intensity + kIntensitySamples;
  size_t outerLoops = n > stage.leaves.size() ? n - stage.leaves.size() : 0;
  double outerIterations = 1;
  for (size_t i = 0; i < outerLoops; ++i) outerIterations *= double(summary.loops[i].extent);
  if (stage.attach == AttachKind::At && !summary.accesses.empty()) {
    const SummaryAccess& store = summary.accesses.front();
    Footprint f = footprint(summary, store);
    rest[0] = logScale(outerLoops < n ? f.distinctBytes[outerLoops] : double(store.elementBytes));
    rest[1] = logScale(outerIterations);
  }
  rest[2] = logScale(outerIterations);
  rest[3] = logScale(double(outerLoops));
  gpuFeatures(summary, stage, rest + 4);
  autotvm::machineStageFeatures(summary, autotvm::loopStats(summary), machine, rest + 4 + 9);
  return out;
}

}  // namespace

std::vector<std::vector<float>> storeFeatures(const State& state, const target::CpuMachine* machine) {
  std::vector<std::vector<float>> out;
  for (const StageSummary& summary : autotvm::summarizeLoops(state)) out.push_back(storeVector(state, summary, machine));
  return out;
}

std::vector<float> stateFeatures(const State& state, const target::CpuMachine* machine) {
  std::vector<StageSummary> summaries = autotvm::summarizeLoops(state);
  std::vector<size_t> order(summaries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return summaries[a].iterations() > summaries[b].iterations(); });
  std::vector<float> out(kStateFeatureLength, 0.0f);
  out[0] = logScale(double(summaries.size()));
  for (size_t k = 0; k < order.size() && k < kStoresPerState; ++k) {
    std::vector<float> store = storeVector(state, summaries[order[k]], machine);
    std::copy(store.begin(), store.end(), out.begin() + 1 + long(k * kStoreFeatureLength));
  }
  return out;
}

}  // namespace tessel::tune::ansor
