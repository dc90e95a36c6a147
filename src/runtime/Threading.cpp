#include "runtime/Threading.h"

#include <omp.h>

#include <cstdlib>

#include "support/Error.h"

namespace tessel::runtime {

namespace {
// Applies TESSEL_NUM_THREADS at load time; this reference also keeps libgomp linked in.
const bool kThreadsConfigured = [] {
  if (const char* env = std::getenv("TESSEL_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) omp_set_num_threads(n);
  }
  return true;
}();
}  // namespace

int kernelThreadCount() { return omp_get_max_threads(); }

void setKernelThreadCount(int threads) {
  TESSEL_CHECK(threads >= 1, "thread count must be at least 1, got {}", threads);
  omp_set_num_threads(threads);
}

}  // namespace tessel::runtime
