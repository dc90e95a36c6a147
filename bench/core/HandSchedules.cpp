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

std::vector<StepPtr> sgemmSchedule(const target::CpuMachine& machine) {
  const int64_t lanes = machine.lanes(4);
  return {
      step<schedule::CacheWriteStep>("C", "local"),
      step<schedule::SplitStep>("C", "i", std::vector<int64_t>{6}),
      step<schedule::SplitStep>("C", "j", std::vector<int64_t>{2, lanes}),
      step<schedule::ReorderStep>("C", std::vector<std::string>{"j.0", "i.0", "i.1", "j.1", "j.2"}),
      step<schedule::AnnotateStep>("C", "j.0", Annotation::Parallel),
      step<schedule::AnnotateStep>("C", "j.2", Annotation::Vectorize),
      step<schedule::AnnotateStep>("C", "i.1", Annotation::Unroll),
      step<schedule::AnnotateStep>("C", "j.1", Annotation::Unroll),
      step<schedule::ComputeAtStep>("C.local", "C", "i.0"),
      step<schedule::SplitStep>("C.local", "j", std::vector<int64_t>{lanes}),
      step<schedule::ReorderStep>("C.local", std::vector<std::string>{"k", "i", "j.0", "j.1"}),
      step<schedule::AnnotateStep>("C.local", "i", Annotation::Unroll),
      step<schedule::AnnotateStep>("C.local", "j.0", Annotation::Unroll),
      step<schedule::AnnotateStep>("C.local", "j.1", Annotation::Vectorize),
      step<schedule::CacheReadStep>("B", "panel", std::vector<std::string>{"C.local"}),
      step<schedule::ComputeAtStep>("B.panel", "C", "j.0"),
  };
}

std::vector<StepPtr> convRes2Schedule(const target::CpuMachine& machine) {
  const int64_t lanes = machine.lanes(4);
  // Pixels x 2 accumulator vectors beside a broadcast of the input and one weight vector (an
  // FMA reads the other from memory): 7 pixels on 16 registers (AVX2), 8 on 32. With both
  // weight vectors in registers AVX2 got 4 pixels, 8 accumulators, just enough to cover the
  // FMA's latency on two ports, and ran at 0.5-0.65x oneDNN; 7 pixels run at 0.9-1.0x (Zen 3).
  int64_t pixels = 1;
  for (int64_t p : {2, 4, 7, 8})
    if (p * 2 + 2 <= machine.vectorRegisters) pixels = p;
  const std::string out = "conv2d_nhwc", local = "conv2d_nhwc.local";
  return {
      step<schedule::CacheWriteStep>(out, "local"),
      step<schedule::SplitStep>(out, "xx", std::vector<int64_t>{pixels}),
      step<schedule::SplitStep>(out, "ff", std::vector<int64_t>{2, lanes}),
      step<schedule::ReorderStep>(out, std::vector<std::string>{"nn", "yy", "xx.0", "ff.0", "xx.1", "ff.1", "ff.2"}),
      step<schedule::FuseStep>(out, std::vector<std::string>{"nn", "yy"}),
      step<schedule::AnnotateStep>(out, "nn@yy", Annotation::Parallel),
      step<schedule::AnnotateStep>(out, "xx.1", Annotation::Unroll),
      step<schedule::AnnotateStep>(out, "ff.1", Annotation::Unroll),
      step<schedule::AnnotateStep>(out, "ff.2", Annotation::Vectorize),
      step<schedule::ComputeAtStep>(local, out, "ff.0"),
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
