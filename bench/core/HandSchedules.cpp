#include "HandSchedules.h"

#include <algorithm>

namespace tessel::bench {

namespace {

using schedule::Annotation;
using schedule::StepPtr;

template <typename Step, typename... Args>
StepPtr step(Args&&... args) {
  return std::make_shared<Step>(std::forward<Args>(args)...);
}

}  // namespace

std::vector<StepPtr> sgemmSchedule(const target::CpuMachine& machine, const SgemmTile& tile) {
  const int64_t lanes = machine.lanes(4);
  std::vector<StepPtr> steps = {step<schedule::CacheWriteStep>("C", "local")};
  std::string rowTile = "i.0";
  if (tile.blockTiles > 0) {
    // Row blocks of blockTiles register tiles outside the column panels: a block's rows of A
    // stay in L2 while every panel of B passes them, instead of all of A streaming from the
    // last-level cache once for every panel.
    steps.push_back(step<schedule::SplitStep>("C", "i", std::vector<int64_t>{tile.blockTiles, tile.rows}));
    steps.push_back(step<schedule::SplitStep>("C", "j", std::vector<int64_t>{tile.vectors, lanes}));
    steps.push_back(step<schedule::ReorderStep>("C", std::vector<std::string>{"i.0", "j.0", "i.1", "i.2", "j.1", "j.2"}));
    steps.push_back(step<schedule::AnnotateStep>("C", "i.2", Annotation::Unroll));
    rowTile = "i.1";
  } else {
    steps.push_back(step<schedule::SplitStep>("C", "i", std::vector<int64_t>{tile.rows}));
    steps.push_back(step<schedule::SplitStep>("C", "j", std::vector<int64_t>{tile.vectors, lanes}));
    steps.push_back(step<schedule::ReorderStep>("C", std::vector<std::string>{"j.0", "i.0", "i.1", "j.1", "j.2"}));
    steps.push_back(step<schedule::AnnotateStep>("C", "i.1", Annotation::Unroll));
  }
  std::vector<StepPtr> rest = {
      step<schedule::AnnotateStep>("C", "j.0", Annotation::Parallel),
      step<schedule::AnnotateStep>("C", "j.2", Annotation::Vectorize),
      step<schedule::AnnotateStep>("C", "j.1", Annotation::Unroll),
      step<schedule::ComputeAtStep>("C.local", "C", rowTile),
      step<schedule::SplitStep>("C.local", "j", std::vector<int64_t>{lanes}),
      step<schedule::ReorderStep>("C.local", std::vector<std::string>{"k", "i", "j.0", "j.1"}),
      step<schedule::AnnotateStep>("C.local", "i", Annotation::Unroll),
      step<schedule::AnnotateStep>("C.local", "j.0", Annotation::Unroll),
      step<schedule::AnnotateStep>("C.local", "j.1", Annotation::Vectorize),
      step<schedule::CacheReadStep>("B", "panel", std::vector<std::string>{"C.local"}),
      step<schedule::ComputeAtStep>("B.panel", "C", "j.0"),
  };
  steps.insert(steps.end(), rest.begin(), rest.end());
  if (tile.blockTiles > 0 && tile.packA) {
    steps.push_back(step<schedule::CacheReadStep>("A", "panel", std::vector<std::string>{"C.local"}));
    steps.push_back(step<schedule::ComputeAtStep>("A.panel", "C", "i.0"));
    steps.push_back(step<schedule::StorageAlignStep>("A.panel", "ax0", 1024, 16));
  }
  return steps;
}

std::vector<StepPtr> convRes2Schedule(const target::CpuMachine& machine, const ConvTile& tile) {
  const int64_t lanes = machine.lanes(4);
  // Pixels x vectors of accumulators beside the weight vectors and a broadcast of the input
  // (AVX2's FMA cannot broadcast from memory), at most 8 pixels: 6 on 16 registers (AVX2, with
  // a tail: 56 = 9 x 6 + 2), 8 on 32. 7 pixels, which count on the compiler folding one weight
  // load into the FMA, made gcc spill an accumulator for -mcpu=haswell and ran at 0.55x oneDNN
  // where 6 ran at 1.0x (bench_core on Zen 3, both for haswell).
  int64_t pixels = std::min<int64_t>(8, (machine.vectorRegisters - tile.vectors - machine.broadcastRegisters()) / tile.vectors);
  if (tile.pixels > 0) pixels = tile.pixels;
  const std::string out = "conv2d_nhwc", local = "conv2d_nhwc.local";
  return {
      step<schedule::CacheWriteStep>(out, "local"),
      step<schedule::SplitStep>(out, "xx", std::vector<int64_t>{pixels}),
      step<schedule::SplitStep>(out, "ff", std::vector<int64_t>{tile.vectors, lanes}),
      step<schedule::ReorderStep>(out, tile.channelsOuter
                                           ? std::vector<std::string>{"nn", "yy", "ff.0", "xx.0", "xx.1", "ff.1", "ff.2"}
                                           : std::vector<std::string>{"nn", "yy", "xx.0", "ff.0", "xx.1", "ff.1", "ff.2"}),
      step<schedule::FuseStep>(out, std::vector<std::string>{"nn", "yy"}),
      step<schedule::AnnotateStep>(out, "nn@yy", Annotation::Parallel),
      step<schedule::AnnotateStep>(out, "xx.1", Annotation::Unroll),
      step<schedule::AnnotateStep>(out, "ff.1", Annotation::Unroll),
      step<schedule::AnnotateStep>(out, "ff.2", Annotation::Vectorize),
      step<schedule::ComputeAtStep>(local, out, tile.channelsOuter ? "xx.0" : "ff.0"),
      step<schedule::SplitStep>(local, "ff", std::vector<int64_t>{lanes}),
      step<schedule::ReorderStep>(local, std::vector<std::string>{"nn", "yy", "ry", "rx", "rc", "xx", "ff.0", "ff.1"}),
      step<schedule::AnnotateStep>(local, "xx", Annotation::Unroll),
      step<schedule::AnnotateStep>(local, "ff.0", Annotation::Unroll),
      step<schedule::AnnotateStep>(local, "ff.1", Annotation::Vectorize),
      step<schedule::FuseStep>("PaddedInput", std::vector<std::string>{"i0", "i1"}),
      step<schedule::AnnotateStep>("PaddedInput", "i0@i1", Annotation::Parallel),
      step<schedule::AnnotateStep>("PaddedInput", "i3", Annotation::Vectorize),
  };
}

}  // namespace tessel::bench
