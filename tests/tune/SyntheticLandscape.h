// A synthetic cost landscape over the conv2d NHWC template's real config space (resnet-18's
// 56x56x64 -> 64 3x3 layer), for tests of search without compilers or timings. Throughput is
// a product of per-knob preferences with interactions — a register-pressure penalty on
// vectors x rows, unrolling that helps only short row tiles, weights outside only for wide
// tiles, a remainder penalty on rows — so it is smooth-ish in the knob values but not
// separable. Deterministic: the space is the one of a fixed machine (an AVX-512 CPU with two
// cores), not of the host, whose vector width, registers and cores shape the space (on an
// AVX2 host it has other tiles, and the landscape's lane preference is flat there).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/Examples.h"
#include "tune/autotvm/CpuTemplates.h"

namespace tessel::tune::autotvm::synthetic {

inline TuningTaskPtr resnetConv2dTask() {
  return makeCpuTuningTask("conv2d", ops::conv2dNHWC(1, 64, 56, 56, 64, 3, 3, 1, 1),
                           target::Target::parse("cpu -mcpu=skylake-avx512 -num-cores=2"), "conv2d_nhwc.x86");
}

/// GFLOPS-like throughput of a config of resnetConv2dTask()'s space.
inline double conv2dLandscape(const ConfigEntity& config) {
  std::vector<int64_t> v = config.split("tile_v"), r = config.split("tile_r"), ic = config.split("tile_ic");
  std::vector<int> order = config.order("reorder_reduce");
  bool unroll = config.value("unroll_kw").get<bool>(), weightsOuter = config.value("weights_outer").get<bool>();
  double vectors = double(v[1]), lanes = double(v[2]), rows = double(r[1]), inner = double(ic[1]);
  double lanePreference = lanes >= 16 ? 1.0 : lanes >= 8 ? 0.8 : lanes >= 4 ? 0.55 : 0.3;
  double accumulators = vectors * rows;  // vector registers of the tile
  double registers = accumulators <= 14 ? std::pow(accumulators / 14.0, 0.6) : std::exp(-(accumulators - 14) / 5.0);
  double icPreference = std::exp(-std::pow(std::log2(inner) - 3.5, 2) / 8.0);
  static const double kOrder[6] = {1.0, 0.97, 0.9, 0.82, 0.72, 0.76};
  int orderIndex = order[0] * 2 + (order[1] > order[2] ? 1 : 0);
  double orderPreference = kOrder[std::clamp(orderIndex, 0, 5)];
  double unrollEffect = unroll ? (rows <= 4 ? 1.12 : 0.9) : 1.0;
  double weightsEffect = weightsOuter ? (vectors * lanes >= 32 ? 1.06 : 0.93) : 1.0;
  double remainder = 56 % int64_t(rows) == 0 ? 1.0 : 0.8;
  return 100.0 * lanePreference * registers * icPreference * orderPreference * unrollEffect * weightsEffect * remainder;
}

inline double conv2dLandscape(const TuningTask& task, uint64_t index) { return conv2dLandscape(task.space->get(index)); }

}  // namespace tessel::tune::autotvm::synthetic
