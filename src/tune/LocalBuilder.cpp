#include "tune/LocalBuilder.h"

#include <cctype>
#include <filesystem>
#include <thread>

#include "codegen/CSource.h"
#include "passes/Lower.h"
#include "support/Error.h"
#include "support/ThreadPool.h"
#include "tune/IsolatedCall.h"

namespace tessel::tune {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

BuildResult buildError(MeasureErrorNo errorNo, std::string message, Clock::time_point start) {
  BuildResult result;
  result.errorNo = errorNo;
  result.errorMessage = std::move(message);
  result.buildSeconds = secondsSince(start);
  return result;
}

}  // namespace

LocalBuilder::LocalBuilder(LocalBuilderOptions options)
    : options_(std::move(options)),
      parallelism_(options_.nParallel > 0 ? options_.nParallel : int(std::max(1u, std::thread::hardware_concurrency()))),
      dir_("tessel-build") {
  TESSEL_CHECK(options_.nParallel >= 0, "LocalBuilder: n_parallel must not be negative, got {}", options_.nParallel);
  TESSEL_CHECK(options_.timeout.count() > 0, "LocalBuilder: the build timeout must be positive, got {} ms",
               options_.timeout.count());
  if (options_.keepFiles) dir_.keep();
}

std::string LocalBuilder::kernelName(const MeasureTask& task) {
  std::string name;
  for (char c : task.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty()) return "default_function";
  if (std::isdigit(static_cast<unsigned char>(name[0]))) name = "k_" + name;
  return name;
}

std::vector<runtime::ArgSpec> LocalBuilder::argumentSpecs(const te::ComputeDAG& dag) {
  std::vector<runtime::ArgSpec> specs;
  for (const auto* names : {&dag.inputNames(), &dag.outputNames()})
    for (const auto& name : *names) {
      const auto& op = dag.op(name);
      specs.push_back({name, op->dtype, op->shape});
    }
  return specs;
}

std::string LocalBuilder::generateSource(const MeasureInput& input, const std::string& kernelName) {
  auto state = schedule::replay(input.task->dag, input.steps);
  auto function = passes::lower(state, kernelName);
  return codegen::generateCSource({function});
}

std::vector<BuildResult> LocalBuilder::build(const std::vector<MeasureInput>& inputs) {
  std::vector<BuildResult> results(inputs.size());
  if (inputs.empty()) return results;
  int64_t firstId = nextId_.fetch_add(int64_t(inputs.size()));
  ThreadPool pool(std::min<int>(parallelism_, int(inputs.size())));
  pool.parallelFor(int(inputs.size()), [&](int i) {
    try {
      results[size_t(i)] = buildOne(inputs[size_t(i)], int(firstId + i));
    } catch (const std::exception& e) {
      // Only a broken setup gets here (no fork, no pipe); it still ends as this candidate's record.
      BuildResult r;
      r.errorNo = MeasureErrorNo::UnknownError;
      r.errorMessage = std::string("builder: ") + e.what();
      results[size_t(i)] = r;
    }
  });
  return results;
}

BuildResult LocalBuilder::buildOne(const MeasureInput& input, int id) {
  auto start = Clock::now();
  auto deadline = start + options_.timeout;
  TESSEL_CHECK(input.task != nullptr, "LocalBuilder: candidate {} has no task", id);
  const MeasureTask& task = *input.task;
  std::string kernel = kernelName(task);

  codegen::CompileOptions compile;
  try {
    compile = options_.compileOptions ? *options_.compileOptions : codegen::compileOptionsForTarget(task.target);
  } catch (const Error& e) {
    return buildError(MeasureErrorNo::InstantiationError, e.what(), start);
  }

  // Replay, lower and generate code in a child process: a crash or hang there ends only the child.
  SourceGenerator generate = options_.sourceGenerator ? options_.sourceGenerator : &LocalBuilder::generateSource;
  auto isolated = runIsolated([&] { return generate(input, kernel); }, options_.timeout);
  double lowerSeconds = secondsSince(start);
  using Status = IsolatedCallResult::Status;
  if (isolated.status == Status::TimedOut)
    return buildError(MeasureErrorNo::BuildTimeoutError,
                      fmt::format("build timed out after {:.1f} s while lowering and generating code for task '{}'",
                                  isolated.seconds, task.name),
                      start);
  if (isolated.status == Status::Threw)
    return buildError(MeasureErrorNo::InstantiationError, isolated.output, start);
  if (isolated.status == Status::Crashed)
    return buildError(MeasureErrorNo::InstantiationError,
                      fmt::format("lowering task '{}' crashed the build process: {}", task.name, isolated.describe()),
                      start);

  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (remaining.count() <= 0)
    return buildError(MeasureErrorNo::BuildTimeoutError,
                      fmt::format("build timed out after {:.1f} s before compiling task '{}'", secondsSince(start),
                                  task.name),
                      start);
  compile.timeout = remaining;
  std::string library = fmt::format("{}/candidate_{}.so", dir_.path(), id);
  codegen::CompileTimes times;
  try {
    codegen::compileSharedLibrary(isolated.output, library, compile, &times);
  } catch (const Error& e) {
    bool late = Clock::now() >= deadline;
    return buildError(late ? MeasureErrorNo::BuildTimeoutError : MeasureErrorNo::CompileHostError,
                      late ? fmt::format("build timed out after {:.1f} s while compiling: {}", secondsSince(start), e.what())
                           : std::string(e.what()),
                      start);
  }

  BuildResult result;
  result.libraryPath = library;
  result.kernelName = kernel;
  result.args = argumentSpecs(task.dag);
  result.numInputs = int(task.dag.inputNames().size());
  result.buildSeconds = secondsSince(start);
  result.lowerSeconds = lowerSeconds;
  result.compileSeconds = times.compileSeconds;
  result.linkSeconds = times.linkSeconds;
  return result;
}

void LocalBuilder::discard(const BuildResult& result) {
  if (!result.ok() || result.libraryPath.empty() || options_.keepFiles) return;
  std::error_code ignored;
  std::filesystem::remove(result.libraryPath, ignored);
  std::filesystem::remove(result.libraryPath + ".cpp", ignored);
}

}  // namespace tessel::tune
