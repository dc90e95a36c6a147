/// Feature vectors of configs for the cost model, the three kinds of AutoTVM:
///
///   knob     the config's choices as numbers: per knob its option index, and for a split
///            log2 of every factor. Cheap and exact, but only meaningful within one space.
///   itervar  from the loop nest the config instantiates (LoopSummary.h): per computed stage
///            (the heaviest three, heaviest first) and per loop (the innermost ten, padded at
///            the outer end so the innermost loop always has the same slot): its extent, its
///            annotation (none/parallel/vectorize/unroll, one-hot), whether it reduces, the
///            products of the extents above and below it, and per tensor touched (the store,
///            then up to three loads) the loop's stride in bytes, the bytes touched under the
///            loop and their reuse. Never looks at knob names, so models transfer between
///            tasks whose templates differ.
///   curve    task-independent summaries of the same nest: per tensor, the reuse and the
///            access count as functions of the bytes touched, sampled at fixed points as the
///            loops widen from the innermost outwards; plus the parallel, vector and unroll
///            extents. The same length for every task.
///
/// Itervar and curve end with the machine features of their stages (MachineFeatures.h): the
/// same nest read against the CPU's vector width, register file, cores and caches (zeros for
/// a GPU), so that a model sees whether a tile fits the machine, not only its size.
///
/// All values are log2(1 + x) scaled. Itervar and curve vectors have a fixed length for every
/// task, so histories of different tasks train one model (AutoTVM crashed on ragged itervar
/// vectors, tvm-facts §5.10).
#pragma once
#include <string>
#include <vector>

#include "schedule/State.h"
#include "target/CpuMachine.h"
#include "tune/autotvm/ConfigSpace.h"
#include "tune/autotvm/MachineFeatures.h"

namespace tessel::tune::autotvm {

enum class FeatureType { Knob, Itervar, Curve };
/// "knob", "itervar", "curve"; Error listing them otherwise.
FeatureType parseFeatureType(const std::string& name);
const char* featureTypeName(FeatureType type);
/// True for the types that do not depend on the space (usable for transfer learning).
inline bool isTransferable(FeatureType type) { return type != FeatureType::Knob; }

/// The length of knob features for a space.
size_t knobFeatureLength(const ConfigSpace& space);
std::vector<float> knobFeatures(const ConfigEntity& config, const ConfigSpace& space);

/// `machine`: the CPU the task's target describes; null for a GPU target.
constexpr size_t kItervarLength = 3 * (2 + 10 * (9 + 4 * 3) + kMachineStageLength);
std::vector<float> itervarFeatures(const schedule::State& state, const target::CpuMachine* machine);

constexpr size_t kCurveLength = 2 * (5 + 4 * 2 * 20 + kMachineStageLength);
std::vector<float> curveFeatures(const schedule::State& state, const target::CpuMachine* machine);

}  // namespace tessel::tune::autotvm
