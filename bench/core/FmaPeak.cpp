#include "FmaPeak.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace tessel::bench {

namespace {

// 12 accumulators: more than latency (4 cycles) x FMA ports (2) so both ports stay busy.
constexpr int kChains = 12;

// The widest vector the build targets; compiled with -march=native -ffp-contract=fast, so
// `acc * a + b` is one fused multiply-add.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 1;
#endif
typedef float Vector __attribute__((vector_size(kLanes * sizeof(float))));

float fmaLoop(long iterations, float seed) {
  Vector acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = (seed + float(c)) - Vector{};
  const Vector a = 0.999999f - Vector{}, b = 1e-7f - Vector{};
  for (long i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * a + b;
  }
  float total = 0;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l) total += acc[c][l];
  return total;
}

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
