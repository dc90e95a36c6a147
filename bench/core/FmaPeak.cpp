#include "FmaPeak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace tessel::bench {

namespace {

// 12 accumulators: more than latency (4 cycles) x FMA ports (2) so both ports stay busy.
constexpr int kChains = 12;

#if defined(__AVX512F__)
constexpr int kLanes = 16;
float fmaLoop(long iterations, float seed) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + float(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  // Not _mm512_reduce_add_ps: GCC 12's version of it warns under -Wall.
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kLanes = 8;
float fmaLoop(long iterations, float seed) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(seed + float(c));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}
#else
constexpr int kLanes = 1;
float fmaLoop(long iterations, float seed) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = seed + float(c);
  for (long i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = __builtin_fmaf(acc[c], 0.999999f, 1e-7f);
  }
  float total = 0;
  for (float v : acc) total += v;
  return total;
}
#endif

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const char* fmaPeakIsa() {
  return kLanes == 16 ? "avx512" : kLanes == 8 ? "avx2+fma" : "scalar";
}

double measureFmaPeakGflops(int threads, double seconds) {
  // Calibrate on one thread so that one round lasts about `seconds`.
  long iterations = 1 << 20;
  volatile float sink = 0;
  for (;;) {
    auto start = std::chrono::steady_clock::now();
    sink = sink + fmaLoop(iterations, 1.0f);
    double t = secondsSince(start);
    if (t > seconds / 4) {
      iterations = long(double(iterations) * seconds / t);
      break;
    }
    iterations *= 4;
  }
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<double> elapsed(threads);
    std::vector<std::thread> workers;
    std::vector<float> results(threads);
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        auto start = std::chrono::steady_clock::now();
        results[t] = fmaLoop(iterations, float(t));
        elapsed[t] = secondsSince(start);
      });
    }
    for (auto& w : workers) w.join();
    for (float r : results) sink = sink + r;
    double slowest = *std::max_element(elapsed.begin(), elapsed.end());
    double flops = 2.0 * kLanes * kChains * double(iterations) * threads;
    best = std::max(best, flops / slowest / 1e9);
  }
  return best;
}

}  // namespace tessel::bench
