#include "passes/Lower.h"

#include "ir/Simplify.h"
#include "passes/Passes.h"
#include "passes/TensorizeMma.h"
#include "passes/VerifyGpuKernel.h"

namespace tessel::passes {

LoweredFunction lower(const schedule::State& state, const std::string& name) {
  LoweredFunction f = schedule::buildLoopNest(state, name);  // loops, attach points, guards, flat reads
  ir::Stmt s = f.body;
  s = ir::simplify(s);          // canonical index arithmetic, provably true guards gone
  s = guardPaddedTaps(s);       // updates that add a zero-padded read become guarded updates
  s = partitionLoops(s);        // split loops at guard boundaries: a guard-free main body and a tail
  s = tightenGuardedLoops(s);   // a loop that is one guard on its variable runs where it can hold
  s = ir::simplify(s);
  s = unrollLoops(s);           // explicit unroll annotations and auto_unroll_max_step pragmas
  s = ir::simplify(s);
  s = hoistInvariantGuards(s);  // a test shared by a whole loop body runs once, before the loop
  s = vectorizeLoops(s);        // vectorized loops become vector expressions (or stay scalar)
  s = ir::simplify(s);          // ramp arithmetic folds into dense ramps
  s = promoteRegisters(s);      // small local buffers with constant indices become variables
  s = ir::simplify(s);
  f.body = s;
  return f;
}

GpuLoweredFunction lowerForGpu(const schedule::State& state, const std::string& name, const GpuLimits& limits) {
  LoweredFunction f = schedule::buildLoopNest(state, name);
  ir::Stmt s = f.body;
  s = ir::simplify(s);
  s = tensorizeWarpMma(s);             // tensorized products become tensor-core instructions
  s = unrollLoops(s);                  // explicit unroll annotations and auto_unroll_max_step pragmas
  s = ir::simplify(s);
  s = vectorizeCopies(s);              // vectorized copies become wide loads and stores
  // Double-buffered copies load the next iterations ahead: asynchronously where the GPU can.
  s = limits.asyncCopies ? pipelineAsyncCopies(s, limits.maxSharedMemoryPerBlock) : prefetchDoubleBuffers(s);
  s = ir::simplify(s);
  s = insertSharedMemoryBarriers(s);   // threads wait where shared memory passes between them
  f.body = s;
  GpuLaunch launch = gpuLaunchOf(s);   // grid and block from the bound loops
  // More shared memory than a block may declare is taken at launch (CUDA's dynamic shared memory).
  launch.dynamicShared = launch.sharedBytes > limits.maxSharedMemoryPerBlock;
  verifyGpuKernel(f, launch, limits);  // within the device's limits, runnable by a GPU at all
  return {f, launch};
}

}  // namespace tessel::passes
