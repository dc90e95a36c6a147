/// Test and benchmark helper: a blocked int8 matrix multiply C = A · Bᵀ written by hand against
/// the VTA command stream, the way a compiler would lower it, with an optional ALU epilogue
/// (shift right, clip to int8). Tiles of A and B go through `bufferSlots` input/weight slots
/// and `accumulatorSlots` accumulator slots; with two of each, loads, GEMMs and stores overlap,
/// guarded by dependency tokens (double buffering); with one, they serialize. Matrix edges that
/// do not fill a tile are zero-padded by the DMA; the host packs A as [M/BATCH][K/BLOCK][BATCH]
/// [BLOCK], B as [N/BLOCK][K/BLOCK][BLOCK][BLOCK] and reads C as [M/BATCH][N/BLOCK][BATCH][BLOCK].
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vta/CommandStream.h"

namespace tessel::vta::testing {

struct MatmulShape {
  int m = 16, n = 16, k = 16;       // matrix sizes in values
  int tileM = 4, tileN = 2, tileK = 2;  // tile sizes in buffer elements
  int bufferSlots = 2;
  int accumulatorSlots = 2;
  bool epilogue = false;  // shift right by `shift`, then clip to [-128, 127]
  int shift = 6;
  /// Leaves out the compute->load tokens that keep a load from overwriting a slot a GEMM has
  /// not read yet: a deliberately broken program, for the interleaving test.
  bool forgetSlotReuseTokens = false;
};

inline int ceilDivide(int a, int b) { return (a + b - 1) / b; }

struct MatmulData {
  std::vector<int8_t> a, b;  // row-major M×K and N×K
};

inline MatmulData randomMatmulData(const MatmulShape& shape, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> value(-128, 127);
  MatmulData data;
  data.a.resize(size_t(shape.m) * shape.k);
  data.b.resize(size_t(shape.n) * shape.k);
  for (auto& x : data.a) x = int8_t(value(random));
  for (auto& x : data.b) x = int8_t(value(random));
  return data;
}

/// The naive reference: int32 dot products, then the epilogue or the store's truncation.
inline std::vector<int8_t> referenceMatmul(const MatmulShape& shape, const MatmulData& data) {
  std::vector<int8_t> c(size_t(shape.m) * shape.n);
  for (int i = 0; i < shape.m; ++i)
    for (int j = 0; j < shape.n; ++j) {
      uint32_t wrapped = 0;  // the int32 accumulator wraps around
      for (int k = 0; k < shape.k; ++k)
        wrapped += uint32_t(int32_t(data.a[i * shape.k + k]) * data.b[j * shape.k + k]);
      int32_t sum = int32_t(wrapped);
      if (shape.epilogue) sum = std::clamp(sum >> shape.shift, -128, 127);
      c[i * shape.n + j] = int8_t(uint32_t(sum) & 0xff);  // keep the low 8 bits
    }
  return c;
}

/// Hand-counted statistics of the program recordMatmul writes.
struct MatmulCounts {
  uint64_t inputBytes = 0, weightBytes = 0, microOpBytes = 0, outputBytes = 0, gemm = 0, alu = 0;
};

struct MatmulProgram {
  DeviceBuffer a, b, c;
  MatmulCounts expected;
};

/// Records the whole multiply on `stream` (not synchronized yet).
inline MatmulProgram recordMatmul(CommandStream& stream, const MatmulShape& shape,
                                  const MatmulData& data) {
  const HardwareConfig& config = stream.device().config();
  const int batch = config.batch(), block = config.blockIn();
  const int mElements = ceilDivide(shape.m, batch), kElements = ceilDivide(shape.k, block),
            nElements = ceilDivide(shape.n, block);
  // Pack into the blocked layouts, zero-filling partial elements.
  std::vector<int8_t> packedA(size_t(mElements) * kElements * batch * block, 0);
  for (int i = 0; i < shape.m; ++i)
    for (int k = 0; k < shape.k; ++k)
      packedA[((size_t(i / batch) * kElements + k / block) * batch + i % batch) * block + k % block] =
          data.a[i * shape.k + k];
  std::vector<int8_t> packedB(size_t(nElements) * kElements * block * block, 0);
  for (int j = 0; j < shape.n; ++j)
    for (int k = 0; k < shape.k; ++k)
      packedB[((size_t(j / block) * kElements + k / block) * block + j % block) * block + k % block] =
          data.b[j * shape.k + k];

  MatmulProgram program;
  program.a = stream.allocate(packedA.size());
  program.b = stream.allocate(packedB.size());
  program.c = stream.allocate(size_t(mElements) * nElements * batch * block);
  stream.copyToDevice(program.a, packedA.data(), packedA.size());
  stream.copyToDevice(program.b, packedB.data(), packedB.size());

  const int TM = shape.tileM, TN = shape.tileN, TK = shape.tileK;
  const uint32_t inputSlotSize = TM * TK, weightSlotSize = TN * TK, accumulatorSlotSize = TM * TN;
  std::set<std::vector<uint32_t>> kernels;  // distinct micro-op contents, for the byte count
  auto remember = [&kernels](const MicroKernel& kernel) {
    std::vector<uint32_t> key;
    for (const MicroOp& op : kernel.microOps) key.insert(key.end(), {op.destination, op.source, op.weight});
    kernels.insert(key);
  };
  MatmulCounts& expected = program.expected;
  int loadIndex = 0, outputIndex = 0;
  for (int mt = 0; mt < ceilDivide(mElements, TM); ++mt) {
    for (int nt = 0; nt < ceilDivide(nElements, TN); ++nt) {
      const int mValid = std::min(TM, mElements - mt * TM), nValid = std::min(TN, nElements - nt * TN);
      const uint32_t accumulatorBase = (outputIndex % shape.accumulatorSlots) * accumulatorSlotSize;
      // The accumulator slot is free once the store that last read it has finished.
      if (outputIndex >= shape.accumulatorSlots) stream.dependencyPop(Stage::Store, Stage::Compute);
      MicroKernel reset;
      reset.loop(TM, TN, 0);
      for (int j = 0; j < TN; ++j) reset.push(accumulatorBase + j, 0, 0);
      stream.gemm(reset, true);
      remember(reset);
      for (int kt = 0; kt < ceilDivide(kElements, TK); ++kt) {
        const int kValid = std::min(TK, kElements - kt * TK);
        const uint32_t slot = loadIndex % shape.bufferSlots;
        // An input/weight slot is free once the GEMM that last read it has finished.
        if (loadIndex >= shape.bufferSlots && !shape.forgetSlotReuseTokens)
          stream.dependencyPop(Stage::Compute, Stage::Load);
        stream.loadBuffer2D(program.a, size_t(mt) * TM * kElements + kt * TK, kValid, mValid,
                            kElements, Padding{0, 0, uint32_t(TK - kValid), uint32_t(TM - mValid)},
                            MemoryType::Input, slot * inputSlotSize);
        stream.loadBuffer2D(program.b, size_t(nt) * TN * kElements + kt * TK, kValid, nValid,
                            kElements, Padding{0, 0, uint32_t(TK - kValid), uint32_t(TN - nValid)},
                            MemoryType::Weight, slot * weightSlotSize);
        expected.inputBytes += uint64_t(kValid) * mValid * config.inputElementBytes();
        expected.weightBytes += uint64_t(kValid) * nValid * config.weightElementBytes();
        stream.dependencyPush(Stage::Load, Stage::Compute);
        stream.dependencyPop(Stage::Load, Stage::Compute);
        // Outer loop: rows of the tile; inner loop: the reduction; micro-ops: output columns.
        MicroKernel multiply;
        multiply.loop(TM, TN, TK, 0).loop(TK, 0, 1, 1);
        for (int j = 0; j < TN; ++j)
          multiply.push(accumulatorBase + j, slot * inputSlotSize, slot * weightSlotSize + j * TK);
        stream.gemm(multiply);
        remember(multiply);
        expected.gemm += uint64_t(TM) * TN * TK;
        if (!shape.forgetSlotReuseTokens) stream.dependencyPush(Stage::Compute, Stage::Load);
        ++loadIndex;
      }
      if (shape.epilogue) {
        MicroKernel elementwise;
        elementwise.loop(TM, TN, TN);
        for (int j = 0; j < TN; ++j) elementwise.push(accumulatorBase + j, accumulatorBase + j);
        stream.alu(elementwise, AluOpcode::ShiftRight, shape.shift);
        stream.alu(elementwise, AluOpcode::Min, 127);
        stream.alu(elementwise, AluOpcode::Max, -128);
        remember(elementwise);
        expected.alu += 3ull * TM * TN;
      }
      stream.dependencyPush(Stage::Compute, Stage::Store);
      stream.dependencyPop(Stage::Compute, Stage::Store);
      const size_t outputOffset = size_t(mt) * TM * nElements + nt * TN;
      if (nValid == TN) {
        stream.storeBuffer2D(accumulatorBase, program.c, outputOffset, TN, mValid, nElements);
      } else {
        // The accumulator rows are TN apart but a store reads its rows contiguously.
        for (int i = 0; i < mValid; ++i)
          stream.storeBuffer2D(accumulatorBase + i * TN, program.c, outputOffset + i * nElements,
                               nValid, 1, nElements);
      }
      expected.outputBytes += uint64_t(mValid) * nValid * config.outputElementBytes();
      stream.dependencyPush(Stage::Store, Stage::Compute);
      ++outputIndex;
    }
  }
  // Take back the tokens nobody waited for, so the queues end empty.
  for (int i = 0; i < std::min(loadIndex, shape.bufferSlots) && !shape.forgetSlotReuseTokens; ++i)
    stream.dependencyPop(Stage::Compute, Stage::Load);
  for (int i = 0; i < std::min(outputIndex, shape.accumulatorSlots); ++i)
    stream.dependencyPop(Stage::Store, Stage::Compute);
  // Every distinct kernel is loaded once: each has TN micro-ops of 4 bytes.
  expected.microOpBytes = kernels.size() * TN * uint64_t(config.microOpBytes());
  return program;
}

/// Reads C back and unpacks it to row-major M×N.
inline std::vector<int8_t> readMatmulResult(CommandStream& stream, const MatmulShape& shape,
                                            const MatmulProgram& program) {
  const HardwareConfig& config = stream.device().config();
  const int batch = config.batch(), block = config.blockIn();
  const int nElements = ceilDivide(shape.n, block);
  std::vector<int8_t> packed(program.c.bytes);
  stream.copyFromDevice(program.c, packed.data(), packed.size());
  std::vector<int8_t> c(size_t(shape.m) * shape.n);
  for (int i = 0; i < shape.m; ++i)
    for (int j = 0; j < shape.n; ++j)
      c[i * shape.n + j] =
          packed[((size_t(i / batch) * nElements + j / block) * batch + i % batch) * block + j % block];
  return c;
}

}  // namespace tessel::vta::testing
