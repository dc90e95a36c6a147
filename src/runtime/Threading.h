/// The thread count parallel kernels run with (OpenMP underneath), readable and settable by
/// the application; `TESSEL_NUM_THREADS` (or OMP_NUM_THREADS) sets the default.
#pragma once

namespace tessel::runtime {

int kernelThreadCount();
void setKernelThreadCount(int threads);

}  // namespace tessel::runtime
