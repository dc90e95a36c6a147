/// Test support for GPU kernels: lower a scheduled State for a GPU target, build it (NVRTC for
/// CUDA), load it on the device, run it on the reference inputs copied to the device and
/// compare the outputs copied back with the reference evaluator (KernelCheck.h's measures).
#pragma once
#include <string>

#include "codegen/GpuBuild.h"
#include "common/KernelCheck.h"
#include "runtime/GpuModule.h"
#include "schedule/Steps.h"

namespace tessel::kernelcheck {

/// lowerForGpu with the target's limits, then buildGpuKernels: one kernel named `name`.
codegen::GpuBinary buildForGpu(const schedule::State& state, const std::string& target, const std::string& name = "kernel");

/// Runs a loaded GPU kernel of `data.dag` on its module's device and returns the largest
/// relative error over all outputs (outputs start as garbage, so an unwritten element shows).
double runGpuAndCompare(const runtime::GpuKernel& kernel, const ReferenceData& data);

/// Empty when a device of the kind is usable, else the reason ("no CUDA device: ...") a test
/// gives GTEST_SKIP.
std::string cudaUnavailableReason();
std::string openclUnavailableReason();

}  // namespace tessel::kernelcheck

namespace tessel::kernelcheck::gpuschedules {

/// matmul(M, N, K) (ops::matmul): C's i and j split into blocks of 8x16 threads, blockIdx.y/x
/// and threadIdx.y/x bound, the accumulation in a local cache per thread; with `sharedA` the
/// rows of A a block needs are fetched into shared memory first, by all its threads together.
std::vector<schedule::StepPtr> matmul(bool sharedA);

/// matmul(false) with the reduction in chunks of 8 whose tiles of A (8 rows) and B (16 columns)
/// are staged in shared memory inside the thread loops, fetched by the block's threads together
/// (the classic shared-memory GEMM tiling).
std::vector<schedule::StepPtr> matmulTiled();

/// conv2dNCHW with batch 1: padding inlined; output channels split into blockIdx.x and
/// threadIdx.y (4 each), rows on blockIdx.y, columns split into 2 virtual threads of 7
/// threadIdx.x, the reduction serial per thread.
std::vector<schedule::StepPtr> conv2d();

}  // namespace tessel::kernelcheck::gpuschedules
