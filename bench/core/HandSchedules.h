/// The hand-written schedules bench_core times, shaped for the target's machine instead of one
/// ISA: the register tiles hold the machine's vectors and fit its register file. SGEMM 1024 is
/// the classic micro-kernel (6 rows x 2 vectors of accumulators, B's panel packed: 12
/// accumulators, 2 vectors of B and a broadcast of A fit 16 registers); ResNet-18's 56x56 64->64
/// 3x3 conv (NHWC) takes pixels x 2 vectors, as many pixels (at most 8) as leave room for the 2
/// weight vectors and a broadcast: 6 on AVX2, with a tail.
#pragma once
#include <vector>

#include "schedule/Steps.h"
#include "target/CpuMachine.h"

namespace tessel::bench {

/// SGEMM's register tile (rows x vectors of accumulators) and its row blocks (blockTiles
/// tiles a block; 0: none, the panels outermost).
struct SgemmTile {
  int64_t rows = 6, vectors = 2, blockTiles = 0, packA = 0;
};

/// The conv's register tile: pixels (0: as many as fit) x vectors of output channels; the
/// channel blocks outside the pixel tiles of a row (1) or inside them (0).
struct ConvTile {
  int64_t pixels = 0, vectors = 2, channelsOuter = 0;
};

/// For ops::matmul(1024, 1024, 1024) (stages C, C.local, B.panel).
std::vector<schedule::StepPtr> sgemmSchedule(const target::CpuMachine& machine, const SgemmTile& tile = {});

/// For ops::conv2dNHWC(1, 64, 56, 56, 64, 3, 3, 1, 1) (stages conv2d_nhwc, its local, PaddedInput).
std::vector<schedule::StepPtr> convRes2Schedule(const target::CpuMachine& machine, const ConvTile& tile = {});

}  // namespace tessel::bench
