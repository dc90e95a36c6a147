#include "tune/TuneTestSupport.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "ops/Examples.h"
#include "support/Error.h"

namespace tessel::tunetest {

tune::MeasureTaskPtr smallMatmul() {
  static const tune::MeasureTaskPtr task = tune::makeMeasureTask("matmul", ops::matmul(16, 16, 16));
  return task;
}

namespace {

/// Puts `statement` at the end of the kernel's body (the last `return 0;` of the source: the
/// manifest function that follows the kernel has none).
std::string inject(std::string source, const std::string& statement) {
  const std::string end = "  return 0;\n}";
  auto at = source.rfind(end);
  TESSEL_CHECK(at != std::string::npos, "test: no kernel end found in the generated source");
  source.insert(at, "  " + statement + "\n");
  return source;
}

}  // namespace

std::string faultySource(const tune::MeasureInput& input, const std::string& kernelName) {
  const std::string& config = input.config;
  if (config == "lower_crash") raise(SIGSEGV);
  if (config == "lower_hang") std::this_thread::sleep_for(std::chrono::hours(1));
  if (config.rfind("sleep_", 0) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(config.substr(6))));
  std::string source = tune::LocalBuilder::generateSource(input, kernelName);
  if (config == "segfault") return inject(source, "volatile uintptr_t bad = 8; *(volatile int*)bad = 1;");
  if (config == "hang") return inject(source, "for (;;) __asm__ volatile(\"\");");
  if (config == "wrong") return inject(source, "((float*)args[num_args - 1].data)[3] += 1.0f;");
  if (config == "kernel_error") return inject(source, "return tessel_fail(error, error_capacity, \"injected kernel failure\");");
  if (config == "syntax") return source + "\nthis is not C++;\n";
  return source;
}

tune::MeasureInput candidate(const tune::MeasureTaskPtr& task, const std::string& config) {
  return tune::MeasureInput{task, {}, config};
}

std::vector<schedule::StepPtr> tiledMatmulSteps() {
  return {std::make_shared<schedule::SplitStep>("C", "i", std::vector<int64_t>{4}),
          std::make_shared<schedule::AnnotateStep>("C", "j", schedule::Annotation::Vectorize)};
}

}  // namespace tessel::tunetest
