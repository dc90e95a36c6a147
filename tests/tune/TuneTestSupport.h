/// Test support for measurement: a small task, and a source generator that turns a
/// candidate's config string into a fault (a kernel that segfaults, hangs, computes a wrong
/// value or returns an error; lowering that crashes or hangs; code that does not compile).
#pragma once
#include <string>

#include "common/ErrorText.h"
#include "tune/LocalBuilder.h"

namespace tessel::tunetest {

/// matmul 16x16x16, float32: builds in a fraction of a second.
tune::MeasureTaskPtr smallMatmul();

/// The source for `input.config`:
///   ""             the default (LocalBuilder::generateSource)
///   "segfault"     the kernel writes through a null pointer
///   "hang"         the kernel never returns
///   "wrong"        the kernel adds 1 to one element of its output
///   "kernel_error" the kernel returns an error with the message "injected kernel failure"
///   "syntax"       the source does not compile
///   "lower_crash"  the generator itself dies of SIGSEGV (in the builder's child process)
///   "lower_hang"   the generator never returns
///   "sleep_MS"     the generator sleeps MS milliseconds, then gives the default source
///   "meet_N:DIR"   the generator waits (at most 20 s) until N generators, its own included,
///                  have left a file in DIR: it fails unless N builds run at the same time
std::string faultySource(const tune::MeasureInput& input, const std::string& kernelName);

/// A candidate of `task` with the given config (and no steps).
tune::MeasureInput candidate(const tune::MeasureTaskPtr& task, const std::string& config);

/// A valid non-trivial schedule of smallMatmul(): split i by 4, vectorize the inner j.
std::vector<schedule::StepPtr> tiledMatmulSteps();

}  // namespace tessel::tunetest
