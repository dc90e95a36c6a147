#include "tune/TuneTestSupport.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <string>
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

/// "N:DIR": leaves a file of its own in DIR, then waits until DIR holds N of them (at most 20 s):
/// the builds meet only if N of them run at the same time, however busy the machine is.
void meetOtherBuilds(const std::string& spec) {
  const auto colon = spec.find(':');
  TESSEL_CHECK(colon != std::string::npos, "test: meet_{}: expected meet_N:DIR", spec);
  const size_t builds = std::stoul(spec.substr(0, colon));
  const std::filesystem::path dir = spec.substr(colon + 1);
  std::string own = (dir / "build-XXXXXX").string();
  const int fd = mkstemp(own.data());
  TESSEL_CHECK(fd >= 0, "test: cannot create a file in {}", dir.string());
  close(fd);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const auto present = size_t(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
    if (present >= builds) return;
    TESSEL_CHECK(std::chrono::steady_clock::now() < until, "test: {} of {} builds ran at the same time in 20 s", present, builds);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::string faultySource(const tune::MeasureInput& input, const std::string& kernelName) {
  const std::string& config = input.config;
  if (config == "lower_crash") raise(SIGSEGV);
  if (config == "lower_hang") std::this_thread::sleep_for(std::chrono::hours(1));
  if (config.rfind("sleep_", 0) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(config.substr(6))));
  if (config.rfind("meet_", 0) == 0) meetOtherBuilds(config.substr(5));
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
