#include "FmaPeak.h"
#include "support/Clock.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace tessel::bench {

namespace {

// Each loop keeps its accumulators in registers and feeds every FMA the result of the same
// chain's previous one: as many independent chains as FMA latency times FMA ports (4 cycles x
// 2 ports on Skylake-X, Zen 4 and Zen 5) keeps every port busy; 16 zmm chains (of 32
// registers) and 12 ymm chains (of 16) leave room for longer latencies. The chains are a fold
// over constant indices, so every access is to a known element and the compiler keeps each in a
// register. An earlier version looped over an array that GCC at -O2 did not unroll: it measured
// store forwarding (a "peak" of 44.8 GFLOPS that SGEMM then beat by 2.5x on Zen 4).
template <class Width, size_t... Chain>
float fmaChains(long iterations, float seed, std::index_sequence<Chain...>) {
  typename Width::Vector acc[] = {Width::set1(seed + float(Chain))...};
  const auto a = Width::set1(0.999999f), b = Width::set1(1e-7f);
  for (long n = 0; n < iterations; ++n) ((acc[Chain] = Width::fma(acc[Chain], a, b)), ...);
  return (Width::sum(acc[Chain]) + ...);
}

template <class Width>
float fmaLoop(long iterations, float seed) {
  return fmaChains<Width>(iterations, seed, std::make_index_sequence<Width::kChains>());
}

#if defined(__AVX512F__)
struct Zmm {
  using Vector = __m512;
  static constexpr int kChains = 16, kLanes = 16;
  static Vector set1(float x) { return _mm512_set1_ps(x); }
  static Vector fma(Vector x, Vector a, Vector b) { return _mm512_fmadd_ps(x, a, b); }
  // Summed by hand: GCC 12's _mm512_reduce_add_ps trips its own -Wuninitialized.
  static float sum(Vector v) {
    alignas(64) float lanes[kLanes];
    _mm512_store_ps(lanes, v);
    float total = 0;
    for (float l : lanes) total += l;
    return total;
  }
};
#endif

#if defined(__AVX2__) && defined(__FMA__)
struct Ymm {
  using Vector = __m256;
  static constexpr int kChains = 12, kLanes = 8;
  static Vector set1(float x) { return _mm256_set1_ps(x); }
  static Vector fma(Vector x, Vector a, Vector b) { return _mm256_fmadd_ps(x, a, b); }
  static float sum(Vector v) {
    alignas(32) float lanes[kLanes];
    _mm256_store_ps(lanes, v);
    float total = 0;
    for (float l : lanes) total += l;
    return total;
  }
};
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
  int vectorBytes;
};

std::vector<PeakLoop> peakLoops() {
  std::vector<PeakLoop> loops;
#if defined(__AVX512F__)
  loops.push_back({"avx512 x16 chains", fmaLoop<Zmm>, 2.0 * Zmm::kLanes * Zmm::kChains, 64});
#endif
#if defined(__AVX2__) && defined(__FMA__)
  loops.push_back({"avx2 x12 chains", fmaLoop<Ymm>, 2.0 * Ymm::kLanes * Ymm::kChains, 32});
#endif
  loops.push_back({"scalar", fmaLoopScalar, 2.0 * 8, 4});
  return loops;
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

double measureFmaPeakGflops(int threads, int maxVectorBytes, double seconds) {
  double best = 0;
  for (const PeakLoop& loop : peakLoops()) {
    if (loop.vectorBytes > maxVectorBytes || (loop.vectorBytes == 4 && best > 0)) continue;
    double gflops = measureLoop(loop, threads, seconds);
    if (gflops > best) {
      best = gflops;
      lastWinner = loop.name;
    }
  }
  return best;
}

}  // namespace tessel::bench
