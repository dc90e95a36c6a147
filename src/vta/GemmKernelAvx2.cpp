// The AVX2 GEMM loop (this file is compiled with -mavx2; see GemmLoop.h). 8 outputs a vector:
// each pair of inputs is broadcast and multiplied with the weight pairs of 8 outputs by one
// vpmaddwd, and two running sums alternate to overlap the adds.
#include <immintrin.h>

#include "vta/GemmLoop.h"

namespace tessel::vta {

namespace {
template <uint32_t kPairs>
void gemmAvx2(const Instruction& in, const MicroOp* microOps, const GemmOperands& operands) {
  const uint32_t pairs = kPairs > 0 ? kPairs : operands.blockIn / 2;
  const uint32_t blockOut = operands.blockOut;
  forEachMicroOp(in, microOps, operands, [&](int32_t* accumulator, const int16_t* input,
                                             const int16_t* weight) {
    for (uint32_t row = 0; row < operands.batch; ++row) {
      const int16_t* inputRow = input + row * operands.blockIn;
      int32_t* accumulatorRow = accumulator + row * blockOut;
      for (uint32_t j = 0; j < blockOut; j += 8) {
        __m256i even = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(accumulatorRow + j));
        __m256i odd = _mm256_setzero_si256();
        for (uint32_t m = 0; m < pairs; ++m) {
          const __m256i w =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(weight + (m * blockOut + j) * 2));
          const __m256i products = _mm256_madd_epi16(_mm256_set1_epi32(inputPair(inputRow + 2 * m)), w);
          if (m % 2 == 0)
            even = _mm256_add_epi32(even, products);
          else
            odd = _mm256_add_epi32(odd, products);
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(accumulatorRow + j), _mm256_add_epi32(even, odd));
      }
    }
  });
}
}  // namespace

void gemmAvx2Pairs8(const Instruction& in, const MicroOp* microOps, const GemmOperands& operands) {
  gemmAvx2<8>(in, microOps, operands);
}
void gemmAvx2Generic(const Instruction& in, const MicroOp* microOps, const GemmOperands& operands) {
  gemmAvx2<0>(in, microOps, operands);
}

}  // namespace tessel::vta
