/// The machine's FP32 FMA peak, measured: independent chains of fused multiply-adds on the
/// widest vector registers the CPU has, so that the result is the throughput bound and not
/// a latency bound. This is the yardstick the generated kernels are compared against.
#pragma once

namespace tessel::bench {

/// GFLOPS (one FMA lane = 2 FLOPs) reached by `threads` threads running at once, each for
/// about `seconds`; the best of a few rounds.
double measureFmaPeakGflops(int threads, double seconds = 0.3);

/// The vector ISA the peak loop was compiled for ("avx512", "avx2+fma" or "scalar").
const char* fmaPeakIsa();

}  // namespace tessel::bench
