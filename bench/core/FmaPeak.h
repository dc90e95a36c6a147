/// The machine's FP32 FMA peak, measured: independent chains of fused multiply-adds on the
/// widest vector registers the CPU has, so that the result is the throughput bound and not
/// a latency bound. This is the yardstick the generated kernels are compared against.
#pragma once

namespace tessel::bench {

/// GFLOPS (one FMA lane = 2 FLOPs) reached by `threads` threads running at once, each for
/// about `seconds`; the best of a few rounds, and of the vector widths the CPU has up to
/// `maxVectorBytes` (the target's: an AVX2 target's peak on an AVX-512 host is the AVX2 loop's;
/// some CPUs run 256-bit FMAs faster than 512-bit ones).
double measureFmaPeakGflops(int threads, int maxVectorBytes, double seconds = 0.3);

/// The loop that reached the peak of the last measureFmaPeakGflops call ("avx512 x16 chains",
/// "avx2 x12 chains" or "scalar").
const char* fmaPeakIsa();

}  // namespace tessel::bench
