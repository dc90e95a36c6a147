#include "FmaPeak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace tessel::bench {

namespace {

// Each loop keeps its accumulators in named registers, written out, and feeds every FMA the
// result of the same chain's previous one: as many independent chains as FMA latency times
// FMA ports (4 cycles x 2 ports on Skylake-X, Zen 4 and Zen 5) keeps every port busy; 16 zmm
// chains (of 32 registers) and 12 ymm chains (of 16) leave room for longer latencies. An
// earlier version kept them in an array that GCC at -O2 did not unroll: it measured the store
// forwarding latency (a "peak" of 44.8 GFLOPS that SGEMM then beat by 2.5x on Zen 4).
#define TESSEL_FMA_CHAINS_16(FMA) \
  FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7) FMA(8) FMA(9) FMA(10) FMA(11) FMA(12) FMA(13) FMA(14) FMA(15)
#define TESSEL_FMA_CHAINS_12(FMA) FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7) FMA(8) FMA(9) FMA(10) FMA(11)

#if defined(__AVX512F__)
constexpr int kChains512 = 16;
float fmaLoop512(long iterations, float seed) {
#define DECLARE(i) __m512 acc##i = _mm512_set1_ps(seed + float(i));
  TESSEL_FMA_CHAINS_16(DECLARE)
#undef DECLARE
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
#define STEP(i) acc##i = _mm512_fmadd_ps(acc##i, a, b);
    TESSEL_FMA_CHAINS_16(STEP)
#undef STEP
  }
  __m512 total = _mm512_setzero_ps();
#define SUM(i) total = _mm512_add_ps(total, acc##i);
  TESSEL_FMA_CHAINS_16(SUM)
#undef SUM
  // Summed by hand: GCC 12's _mm512_reduce_add_ps trips its own -Wuninitialized.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  float sum = 0;
  for (float l : lanes) sum += l;
  return sum;
}
#endif

#if defined(__AVX2__) && defined(__FMA__)
constexpr int kChains256 = 12;
float fmaLoop256(long iterations, float seed) {
#define DECLARE(i) __m256 acc##i = _mm256_set1_ps(seed + float(i));
  TESSEL_FMA_CHAINS_12(DECLARE)
#undef DECLARE
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
#define STEP(i) acc##i = _mm256_fmadd_ps(acc##i, a, b);
    TESSEL_FMA_CHAINS_12(STEP)
#undef STEP
  }
  __m256 total = _mm256_setzero_ps();
#define SUM(i) total = _mm256_add_ps(total, acc##i);
  TESSEL_FMA_CHAINS_12(SUM)
#undef SUM
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, total);
  float sum = 0;
  for (float l : lanes) sum += l;
  return sum;
}
#endif

float fmaLoopScalar(long iterations, float seed) {
  float acc0 = seed, acc1 = seed + 1, acc2 = seed + 2, acc3 = seed + 3, acc4 = seed + 4, acc5 = seed + 5, acc6 = seed + 6,
        acc7 = seed + 7;
  for (long n = 0; n < iterations; ++n) {
    acc0 = acc0 * 0.999999f + 1e-7f, acc1 = acc1 * 0.999999f + 1e-7f, acc2 = acc2 * 0.999999f + 1e-7f;
    acc3 = acc3 * 0.999999f + 1e-7f, acc4 = acc4 * 0.999999f + 1e-7f, acc5 = acc5 * 0.999999f + 1e-7f;
    acc6 = acc6 * 0.999999f + 1e-7f, acc7 = acc7 * 0.999999f + 1e-7f;
  }
  return acc0 + acc1 + acc2 + acc3 + acc4 + acc5 + acc6 + acc7;
}

struct PeakLoop {
  const char* name;
  float (*run)(long, float);
  double flopsPerIteration;  ///< 2 per lane per chain
};

std::vector<PeakLoop> peakLoops() {
  std::vector<PeakLoop> loops;
#if defined(__AVX512F__)
  loops.push_back({"avx512 x16 chains", fmaLoop512, 2.0 * 16 * kChains512});
#endif
#if defined(__AVX2__) && defined(__FMA__)
  loops.push_back({"avx2 x12 chains", fmaLoop256, 2.0 * 8 * kChains256});
#endif
  if (loops.empty()) loops.push_back({"scalar", fmaLoopScalar, 2.0 * 8});
  return loops;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const char* lastWinner = "none";

double measureLoop(const PeakLoop& loop, int threads, double seconds) {
  // Calibrate on one thread so that one round lasts about `seconds`.
  long iterations = 1 << 16;
  volatile float sink = 0;
  for (;;) {
    auto start = std::chrono::steady_clock::now();
    sink = sink + loop.run(iterations, 1.0f);
    double t = secondsSince(start);
    if (t > seconds / 4) {
      iterations = long(double(iterations) * seconds / t);
      break;
    }
    iterations *= 4;
  }
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<double> elapsed(static_cast<size_t>(threads));
    std::vector<float> results(static_cast<size_t>(threads));
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        auto start = std::chrono::steady_clock::now();
        results[size_t(t)] = loop.run(iterations, float(t));
        elapsed[size_t(t)] = secondsSince(start);
      });
    }
    for (auto& w : workers) w.join();
    for (float r : results) sink = sink + r;
    double slowest = *std::max_element(elapsed.begin(), elapsed.end());
    best = std::max(best, loop.flopsPerIteration * double(iterations) * threads / slowest / 1e9);
  }
  return best;
}

}  // namespace

const char* fmaPeakIsa() { return lastWinner; }

double measureFmaPeakGflops(int threads, double seconds) {
  double best = 0;
  for (const PeakLoop& loop : peakLoops()) {
    double gflops = measureLoop(loop, threads, seconds);
    if (gflops > best) {
      best = gflops;
      lastWinner = loop.name;
    }
  }
  return best;
}

}  // namespace tessel::bench
