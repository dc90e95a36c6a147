/// The loop-IR passes run by the lowering driver (Lower.cpp), each a function from a
/// statement to a statement, each in its own source file.
#pragma once
#include <optional>
#include "ir/Stmt.h"

namespace tessel::passes {

/// Turns a reduction update that adds a zero-padded read into a guarded update without the
/// padding test (`if (inside) acc += x * w`), so that partitioning skips the padded taps.
ir::Stmt guardPaddedTaps(const ir::Stmt& s);
/// Splits a loop whose body holds guards on its variable into a main range where the guards
/// provably hold (and are removed by the simplifier) and the remaining ranges.
ir::Stmt partitionLoops(const ir::Stmt& s);
/// Shrinks a loop whose whole body is one guard linear in its variable to the values for
/// which the guard can hold (the border pieces partitioning leaves guarded).
ir::Stmt tightenGuardedLoops(const ir::Stmt& s);
/// Replicates the bodies of unrolled loops, and of loops under an auto_unroll_max_step pragma
/// whose total trip count fits the limit.
ir::Stmt unrollLoops(const ir::Stmt& s);
/// Moves a condition that guards every statement of a loop's body, and does not depend on the
/// loop, in front of the loop; consecutive statements guarded by a shared test get one test.
ir::Stmt hoistInvariantGuards(const ir::Stmt& s);
/// Turns vectorized loops of constant extent into vector code (Ramp/Broadcast); a loop whose
/// body cannot be vectorized stays a scalar loop.
ir::Stmt vectorizeLoops(const ir::Stmt& s);
/// For GPU kernels, whose threads compute in scalars: a vectorized loop becomes vector code only
/// where its body copies consecutive elements to consecutive elements (wide loads and stores:
/// a cooperative copy into shared memory); any other vectorized loop stays a scalar loop.
ir::Stmt vectorizeCopies(const ir::Stmt& s);
/// Double-buffered shared copies (schedule::DoubleBufferStep) at a serial loop: each thread
/// loads its share of the next iteration's copy into registers before the loop body computes
/// and stores it into shared memory at the top of the next iteration (see DoubleBuffer.cpp). A
/// copy whose loop was unrolled away stays as it is. Error naming the stage when the copy reads
/// memory the kernel writes, or is not loops, guards and stores.
ir::Stmt prefetchDoubleBuffers(const ir::Stmt& s);
/// The same copies on a GPU that copies asynchronously (GpuLimits::asyncCopies): each buffer
/// keeps its copy's stages (2 unless the step says more) in shared memory, the copies of the next
/// stages - 1 iterations in flight as `cp.async` (see AsyncCopies.cpp), one barrier per iteration.
/// Two stages whose second slots would take the kernel past `maxSharedBytes` are staged through
/// registers instead, as prefetchDoubleBuffers does (a schedule tuned for that keeps building).
/// Errors as prefetchDoubleBuffers', and naming copies of one loop whose stages differ.
ir::Stmt pipelineAsyncCopies(const ir::Stmt& s, int64_t maxSharedBytes);
/// The pragmas of pipelineAsyncCopies: a store into shared memory issued as an asynchronous copy
/// (its value a load of device memory, or a guarded one with zero otherwise), the end of a group
/// of such copies, and a wait until at most `value` groups are in flight. The barrier pass leaves
/// the copies' stores to the waits and barriers the pipeline places itself.
inline constexpr const char* kAsyncCopyPragma = "async_copy";
inline constexpr const char* kAsyncCommitPragma = "async_commit";
inline constexpr const char* kAsyncWaitPragma = "async_wait";
bool isAsyncCopy(const ir::Stmt& s);
/// What a store into shared memory copies asynchronously: the device memory it loads, the guard
/// under which it does (undefined: always; where it fails the copy reads 0 bytes and fills
/// zeros), and whether it goes as one copy of 4, 8 or 16 bytes (`whole`: both addresses dense and
/// aligned to its size) or element by element. None where the value is not such a load (then the
/// store stays synchronous). The pipeline pass and the CUDA printer decide by this one reading.
struct AsyncCopyForm {
  const ir::LoadNode* source = nullptr;
  ir::Expr condition;
  bool whole = false;
  int elementBytes = 0;
};
std::optional<AsyncCopyForm> asyncCopyFormOf(const ir::StoreNode* store);
/// Replaces small local buffers, all of whose accesses use constant indices, by variables
/// (one per element or per vector), so that the C compiler keeps them in registers.
ir::Stmt promoteRegisters(const ir::Stmt& s);

/// The key of the pragma that stands for a GPU block barrier (__syncthreads, OpenCL's
/// barrier): a pragma with an empty body, so that every pass passes it through unchanged.
inline constexpr const char* kGpuBarrierPragma = "gpu_barrier";
ir::Stmt gpuBarrier();
bool isGpuBarrier(const ir::Stmt& s);
/// Inserts a block barrier where a statement reads shared memory that an earlier statement of
/// the same sequence wrote (other threads' values), or writes shared memory that an earlier one
/// read (others may still read it), and at the end of a loop body that reads and writes the
/// same shared buffer (the next iteration overwrites it).
ir::Stmt insertSharedMemoryBarriers(const ir::Stmt& s);

}  // namespace tessel::passes
