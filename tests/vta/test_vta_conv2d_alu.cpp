// A conv2d 3x3 hand-lowered to VTA in the packed layouts (data NCHW1n16c, weights OIHW16o16i):
// bias added from the accumulator, then shift and clip on the ALU, compared exactly with a
// reference, with hand-counted statistics. And the ALU's semantics opcode by opcode, all 32 bits
// of every result checked (stores keep the low byte, so results are shifted down byte by byte).
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "support/Error.h"
#include "vta/CommandStream.h"
#include "vta/Simulator.h"

using namespace tessel;
using namespace tessel::vta;

namespace {

struct ConvShape {
  int inputBlocks = 2, outputBlocks = 2, height = 8, width = 8, shift = 9;
};

struct ConvData {
  std::vector<int8_t> input;    // [CI][H][W] values, CI = 16 · inputBlocks
  std::vector<int8_t> weights;  // [CO][CI][3][3]
  std::vector<int32_t> bias;    // [CO]
};

ConvData randomConvData(const ConvShape& shape, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> value(-128, 127), biasValue(-50000, 50000);
  const int ci = 16 * shape.inputBlocks, co = 16 * shape.outputBlocks;
  ConvData data;
  data.input.resize(size_t(ci) * shape.height * shape.width);
  data.weights.resize(size_t(co) * ci * 9);
  data.bias.resize(co);
  for (auto& x : data.input) x = int8_t(value(random));
  for (auto& x : data.weights) x = int8_t(value(random));
  for (auto& x : data.bias) x = biasValue(random);
  return data;
}

/// out[co][y][x] = clip((Σ in[ci][y+dy-1][x+dx-1] · w[co][ci][dy][dx] + bias[co]) >> shift).
std::vector<int8_t> referenceConv(const ConvShape& shape, const ConvData& data) {
  const int ci = 16 * shape.inputBlocks, co = 16 * shape.outputBlocks, h = shape.height, w = shape.width;
  std::vector<int8_t> out(size_t(co) * h * w);
  for (int o = 0; o < co; ++o)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        uint32_t sum = uint32_t(data.bias[o]);
        for (int i = 0; i < ci; ++i)
          for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx) {
              const int sy = y + dy - 1, sx = x + dx - 1;
              if (sy < 0 || sy >= h || sx < 0 || sx >= w) continue;
              sum += uint32_t(data.input[(size_t(i) * h + sy) * w + sx] *
                              data.weights[((size_t(o) * ci + i) * 3 + dy) * 3 + dx]);
            }
        out[(size_t(o) * h + y) * w + x] = int8_t(std::clamp(int32_t(sum) >> shape.shift, -128, 127));
      }
  return out;
}

}  // namespace

TEST(VtaConv2d, PackedThreeByThreeWithBiasShiftAndClipMatchesReference) {
  const ConvShape shape;
  const ConvData data = randomConvData(shape, 42);
  const int CI = shape.inputBlocks, CO = shape.outputBlocks, H = shape.height, W = shape.width;
  const int paddedH = H + 2, paddedW = W + 2;

  // Pack: data NCHW1n16c → [CI/16][H][W][16]; weights OIHW16o16i → [CO/16][CI/16][3][3][16][16].
  std::vector<int8_t> packedInput(size_t(CI) * H * W * 16);
  for (int c = 0; c < CI * 16; ++c)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        packedInput[((size_t(c / 16) * H + y) * W + x) * 16 + c % 16] = data.input[(size_t(c) * H + y) * W + x];
  std::vector<int8_t> packedWeights(size_t(CO) * CI * 9 * 256);
  for (int o = 0; o < CO * 16; ++o)
    for (int i = 0; i < CI * 16; ++i)
      for (int k = 0; k < 9; ++k)
        packedWeights[(((size_t(o / 16) * CI + i / 16) * 9 + k) * 16 + o % 16) * 16 + i % 16] =
            data.weights[(size_t(o) * CI * 16 + i) * 9 + k];

  Simulator simulator;
  CommandStream stream(simulator);
  DeviceBuffer input = stream.allocate(packedInput.size());
  DeviceBuffer weights = stream.allocate(packedWeights.size());
  DeviceBuffer bias = stream.allocate(data.bias.size() * 4);
  DeviceBuffer output = stream.allocate(size_t(CO) * H * W * 16);
  stream.copyToDevice(input, packedInput.data(), packedInput.size());
  stream.copyToDevice(weights, packedWeights.data(), packedWeights.size());
  stream.copyToDevice(bias, data.bias.data(), data.bias.size() * 4);

  // Load every input channel block with a zero border of 1 (the conv's padding), all weights.
  for (int c = 0; c < CI; ++c)
    stream.loadBuffer2D(input, size_t(c) * H * W, W, H, W, Padding{1, 1, 1, 1}, MemoryType::Input,
                        c * paddedH * paddedW);
  stream.loadBuffer2D(weights, 0, CO * CI * 9, 1, CO * CI * 9, Padding{}, MemoryType::Weight, 0);
  stream.dependencyPush(Stage::Load, Stage::Compute);
  stream.dependencyPop(Stage::Load, Stage::Compute);
  const uint32_t biasBase = CO * H * W;  // accumulators after the outputs
  stream.loadBuffer2D(bias, 0, CO, 1, CO, Padding{}, MemoryType::Accumulator, biasBase);

  for (int o = 0; o < CO; ++o) {
    const uint32_t outputBase = o * H * W;
    MicroKernel reset;
    reset.loop(H, W, 0).loop(W, 1, 0);
    reset.push(outputBase, 0, 0);
    stream.gemm(reset, true);
    // Loops over output rows and columns; one micro-op per (input block, ky, kx).
    MicroKernel conv;
    conv.loop(H, W, paddedW, 0).loop(W, 1, 1, 0);
    for (int c = 0; c < CI; ++c)
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx)
          conv.push(outputBase, c * paddedH * paddedW + ky * paddedW + kx, ((o * CI + c) * 3 + ky) * 3 + kx);
    stream.gemm(conv);
    MicroKernel addBias;
    addBias.loop(H * W, 1, 0);
    addBias.push(outputBase, biasBase + o);
    stream.alu(addBias, AluOpcode::Add);
    MicroKernel inPlace;
    inPlace.loop(H * W, 1, 1);
    inPlace.push(outputBase, outputBase);
    stream.alu(inPlace, AluOpcode::ShiftRight, shape.shift);
    stream.alu(inPlace, AluOpcode::Min, 127);
    stream.alu(inPlace, AluOpcode::Max, -128);
    stream.dependencyPush(Stage::Compute, Stage::Store);
    stream.dependencyPop(Stage::Compute, Stage::Store);
    stream.storeBuffer2D(outputBase, output, size_t(o) * H * W, H * W, 1, H * W);
  }
  stream.synchronize();

  std::vector<int8_t> packedOutput(output.bytes);
  stream.copyFromDevice(output, packedOutput.data(), packedOutput.size());
  const std::vector<int8_t> expected = referenceConv(shape, data);
  for (int o = 0; o < CO * 16; ++o)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        ASSERT_EQ(packedOutput[((size_t(o / 16) * H + y) * W + x) * 16 + o % 16],
                  expected[(size_t(o) * H + y) * W + x])
            << "channel " << o << " at " << y << "," << x;

  const Statistics& stats = simulator.stats();
  EXPECT_EQ(stats.inputLoadBytes, uint64_t(CI) * H * W * 16);  // padding not counted
  EXPECT_EQ(stats.weightLoadBytes, uint64_t(CO) * CI * 9 * 256);
  EXPECT_EQ(stats.accumulatorLoadBytes, uint64_t(CO) * 64);
  // Multiply-accumulates / (BATCH · BLOCK_IN · BLOCK_OUT).
  EXPECT_EQ(stats.gemmCounter, uint64_t(CO * 16) * (CI * 16) * H * W * 9 / 256);
  EXPECT_EQ(stats.aluCounter, uint64_t(CO) * H * W * 4);
  EXPECT_EQ(stats.outputStoreBytes, uint64_t(CO) * H * W * 16);
  // Distinct kernels, each loaded once: reset (1 uop, per block), conv (18 per block), bias
  // add (1 per block), in-place (1 per block) — but block 0's in-place kernel (0,0,0) is the
  // same micro-op as its reset kernel, so it is already resident: 41 micro-ops of 4 bytes.
  EXPECT_EQ(stats.microOpLoadBytes, 41u * 4);
}

// ---- ALU semantics ----

namespace {

int32_t referenceAlu(AluOpcode opcode, int32_t a, int32_t b) {
  switch (opcode) {
    case AluOpcode::Min: return std::min(a, b);
    case AluOpcode::Max: return std::max(a, b);
    case AluOpcode::Add: return int32_t(uint32_t(a) + uint32_t(b));
    case AluOpcode::Multiply: return int32_t(uint32_t(a) * uint32_t(b));
    case AluOpcode::ShiftRight:
      if (b >= 0) return b >= 31 ? (a < 0 ? -1 : 0) : a >> b;
      return -int64_t(b) >= 32 ? 0 : int32_t(uint32_t(a) << -b);
  }
  return 0;
}

/// Runs dst = op(dst, src or imm) over `count` accumulator elements, then an arithmetic shift
/// by 8·byte, and stores; returns the stored bytes.
std::vector<int8_t> runAlu(AluOpcode opcode, const std::vector<int32_t>& a,
                           const std::vector<int32_t>& b, std::optional<int32_t> immediate,
                           int byte) {
  Simulator simulator;
  CommandStream stream(simulator);
  const uint32_t elements = uint32_t(a.size() / 16);
  DeviceBuffer aBuffer = stream.allocate(a.size() * 4), bBuffer = stream.allocate(b.size() * 4);
  DeviceBuffer out = stream.allocate(a.size());
  stream.copyToDevice(aBuffer, a.data(), a.size() * 4);
  stream.copyToDevice(bBuffer, b.data(), b.size() * 4);
  stream.loadBuffer2D(aBuffer, 0, elements, 1, elements, Padding{}, MemoryType::Accumulator, 0);
  stream.loadBuffer2D(bBuffer, 0, elements, 1, elements, Padding{}, MemoryType::Accumulator, elements);
  MicroKernel kernel;
  kernel.loop(elements, 1, 1);
  kernel.push(0, elements);
  stream.alu(kernel, opcode, immediate);
  if (byte > 0) {
    MicroKernel inPlace;
    inPlace.loop(elements, 1, 1);
    inPlace.push(0, 0);
    stream.alu(inPlace, AluOpcode::ShiftRight, 8 * byte);
  }
  stream.dependencyPush(Stage::Compute, Stage::Store);
  stream.dependencyPop(Stage::Compute, Stage::Store);
  stream.storeBuffer2D(0, out, 0, elements, 1, elements);
  stream.synchronize();
  std::vector<int8_t> result(a.size());
  stream.copyFromDevice(out, result.data(), result.size());
  return result;
}

}  // namespace

TEST(VtaAlu, EveryOpcodeMatchesTheReferenceInAll32Bits) {
  std::mt19937_64 random(9);
  const int lanes = 16 * 8;
  std::vector<int32_t> a(lanes), b(lanes), shifts(lanes);
  for (auto& x : a) x = int32_t(random());
  for (auto& x : b) x = int32_t(random());
  a[0] = INT32_MAX, b[0] = 1;       // ADD wraps
  a[1] = INT32_MIN, b[1] = -1;      // ADD wraps the other way, MUL overflows
  for (int i = 0; i < lanes; ++i) shifts[i] = int32_t(random() % 80) - 40;  // both directions, past 31
  struct Case {
    AluOpcode opcode;
    const std::vector<int32_t>* source;
    std::optional<int32_t> immediate;
  };
  const Case cases[] = {
      {AluOpcode::Min, &b, {}},          {AluOpcode::Max, &b, {}},
      {AluOpcode::Add, &b, {}},          {AluOpcode::Multiply, &b, {}},
      {AluOpcode::ShiftRight, &shifts, {}}, {AluOpcode::Min, &b, -1000},
      {AluOpcode::Max, &b, 32767},       {AluOpcode::Add, &b, -32768},
      {AluOpcode::ShiftRight, &b, 5},    {AluOpcode::ShiftRight, &b, -7},
      {AluOpcode::Multiply, &b, -3},
  };
  for (const Case& c : cases) {
    for (int byte = 0; byte < 4; ++byte) {
      SCOPED_TRACE(::testing::Message() << aluOpcodeName(c.opcode) << " imm "
                                        << (c.immediate ? std::to_string(*c.immediate) : "none")
                                        << " byte " << byte);
      const std::vector<int8_t> result = runAlu(c.opcode, a, *c.source, c.immediate, byte);
      for (int i = 0; i < lanes; ++i) {
        const int32_t value = referenceAlu(c.opcode, a[i], c.immediate ? *c.immediate : (*c.source)[i]);
        ASSERT_EQ(result[i], int8_t(uint32_t(value >> (8 * byte)) & 0xff)) << "lane " << i;
      }
    }
  }
}

TEST(VtaAlu, MultiplyIsRejectedOnHardwareWithoutIt) {
  HardwareConfig config;
  config.hardwareVersion = "0.0.1";
  Simulator simulator(config);
  CommandStream stream(simulator);
  MicroKernel kernel;
  kernel.push(0, 0);
  EXPECT_THROW(stream.alu(kernel, AluOpcode::Multiply, 2), Error);
  EXPECT_NO_THROW(stream.alu(kernel, AluOpcode::Add, 2));
}

TEST(VtaLoad, Accumulator8BitSignExtendsAndCountsAtInt32Size) {
  Simulator simulator;
  CommandStream stream(simulator);
  std::vector<int8_t> values(16 * 6);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int8_t(i * 37 - 100);
  DeviceBuffer source = stream.allocate(values.size()), out = stream.allocate(values.size());
  stream.copyToDevice(source, values.data(), values.size());
  // Rows of 3 elements, 2 rows, stride 3: all 6 elements.
  stream.loadBuffer2D(source, 0, 3, 2, 3, Padding{}, MemoryType::Accumulator8Bit, 10);
  MicroKernel shift;  // arithmetic shift by 4 shows the sign extension in the stored byte
  shift.loop(6, 1, 1);
  shift.push(10, 10);
  stream.alu(shift, AluOpcode::ShiftRight, 4);
  stream.dependencyPush(Stage::Compute, Stage::Store);
  stream.dependencyPop(Stage::Compute, Stage::Store);
  stream.storeBuffer2D(10, out, 0, 6, 1, 6);
  stream.synchronize();
  std::vector<int8_t> result(values.size());
  stream.copyFromDevice(out, result.data(), result.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(result[i], int8_t(values[i] >> 4)) << i;
  EXPECT_EQ(simulator.stats().accumulatorLoadBytes, 6u * 64);
}
