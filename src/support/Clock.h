/// Time spans: the one definition of "seconds since a start" that the tuner, the RPC runner, the
/// benchmarks and the tests time their phases with, and of seconds as a millisecond duration.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>

namespace tessel {

/// Seconds elapsed on std::chrono::steady_clock since `start`.
inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// `seconds` (an option given in seconds) as milliseconds, rounded to the nearest.
inline std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(int64_t(std::llround(seconds * 1000)));
}

}  // namespace tessel
