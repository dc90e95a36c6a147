/// Random annotation of a GPU sketch (GpuSketches.h): a complete schedule within the device's
/// limits. The sketch binds its loops already; annotation fills its holes and adds unrolling:
///
///   tile sizes   every split by factors gets factors sampled uniformly from those of its
///                loop's factorizations (innermost at most 64) that keep each of the sketch's
///                bounded products (TileProductBound: a block's threads, its virtual threads,
///                a cross-thread reduction's parts) within its limit, split by split, the last
///                factor of a product also reaching its minimum where one can; splits by
///                nparts are the sketch's own and stay
///   unroll       every stage with a reduction gets auto_unroll_max_step from {0, 16, 64, 512,
///                1024} on its outermost loop
///
/// A state whose products stay below a bound's minimum (a tiled block of fewer threads than a
/// warp) or that the counting check refuses (GpuStateLimits.h: shared or local memory) is
/// sampled again, a few times; the last try is returned as it is, for the caller to refuse.
#pragma once
#include "tune/ansor/Annotation.h"

namespace tessel::tune::ansor {

/// options.gpu must be set. Throws Error if a step of the sketch does not apply (a bug in the
/// rules, never in the input).
AnnotatedState annotateGpuRandomly(const te::ComputeDAG& dag, const Sketch& sketch, SplitFactorizations& factorizations,
                                   std::mt19937_64& rng, const AnnotationOptions& options);

}  // namespace tessel::tune::ansor
