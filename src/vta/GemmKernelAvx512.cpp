// The AVX-512 VNNI GEMM loop (this file is compiled with -mavx512f -mavx512bw -mavx512vnni; see
// GemmLoop.h). 16 outputs a vector; vpdpwssd fuses the pair multiply and the accumulate, and
// four running sums shorten its dependency chain.
#include <immintrin.h>

#include "vta/GemmLoop.h"

namespace tessel::vta {

namespace {
template <uint32_t kPairs>
void gemmAvx512(const Instruction& in, const MicroOp* microOps, const GemmOperands& operands) {
  const uint32_t pairs = kPairs > 0 ? kPairs : operands.blockIn / 2;
  const uint32_t blockOut = operands.blockOut;
  forEachMicroOp(in, microOps, operands, [&](int32_t* accumulator, const int16_t* input,
                                             const int16_t* weight) {
    for (uint32_t row = 0; row < operands.batch; ++row) {
      const int16_t* inputRow = input + row * operands.blockIn;
      int32_t* accumulatorRow = accumulator + row * blockOut;
      for (uint32_t j = 0; j < blockOut; j += 16) {
        __m512i sums[4] = {_mm512_loadu_si512(accumulatorRow + j), _mm512_setzero_si512(),
                           _mm512_setzero_si512(), _mm512_setzero_si512()};
        for (uint32_t m = 0; m < pairs; ++m) {
          const __m512i w = _mm512_loadu_si512(weight + (m * blockOut + j) * 2);
          sums[m % 4] =
              _mm512_dpwssd_epi32(sums[m % 4], _mm512_set1_epi32(inputPair(inputRow + 2 * m)), w);
        }
        _mm512_storeu_si512(accumulatorRow + j,
                            _mm512_add_epi32(_mm512_add_epi32(sums[0], sums[1]),
                                             _mm512_add_epi32(sums[2], sums[3])));
      }
    }
  });
}
}  // namespace

void gemmAvx512Pairs8(const Instruction& in, const MicroOp* microOps, const GemmOperands& operands) {
  gemmAvx512<8>(in, microOps, operands);
}
void gemmAvx512Generic(const Instruction& in, const MicroOp* microOps, const GemmOperands& operands) {
  gemmAvx512<0>(in, microOps, operands);
}

}  // namespace tessel::vta
