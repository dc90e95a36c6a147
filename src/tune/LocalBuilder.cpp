#include "tune/LocalBuilder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <thread>

#include "codegen/CSource.h"
#include "passes/Lower.h"
#include "support/Clock.h"
#include "support/Error.h"
#include "support/JsonParse.h"
#include "support/ThreadPool.h"
#include "target/HostCpu.h"
#include "tune/GpuCandidateBuild.h"
#include "tune/IsolatedCall.h"

namespace tessel::tune {

namespace {

using Clock = std::chrono::steady_clock;

BuildResult buildError(MeasureErrorNo errorNo, std::string message, Clock::time_point start) {
  return buildErrorResult(errorNo, std::move(message), secondsSince(start));
}

}  // namespace

int mostParallelBuilds() { return 4 * target::availableCores(); }

LocalBuilder::LocalBuilder(LocalBuilderOptions options)
    : options_(std::move(options)),
      parallelism_(options_.nParallel > 0 ? options_.nParallel : target::availableCores()),
      dir_("tessel-build") {
  TESSEL_CHECK(options_.nParallel >= 0, "LocalBuilder: n_parallel must not be negative, got {}", options_.nParallel);
  TESSEL_CHECK(options_.nParallel <= mostParallelBuilds(),
               "LocalBuilder: {} parallel builds on {} cores; at most {} (4 per core: compilers are bound by the CPU, "
               "more only add memory)",
               options_.nParallel, target::availableCores(), mostParallelBuilds());
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

codegen::CFunctionSource LocalBuilder::generateFunction(const MeasureInput& input, const std::string& kernelName) {
  return codegen::generateCFunction(passes::lower(schedule::replay(input.task->dag, input.steps), kernelName));
}

std::vector<BuildResult> LocalBuilder::build(const std::vector<MeasureInput>& inputs) {
  std::vector<BuildResult> results(inputs.size());
  if (inputs.empty()) return results;
  int64_t firstId = nextId_.fetch_add(int64_t(inputs.size()));
  // GPU candidates are built one by one (a module each): shared units are the CPU's.
  bool anyGpu = std::any_of(inputs.begin(), inputs.end(), [](const MeasureInput& i) { return i.task && i.task->onGpu(); });
  if (options_.shareTranslationUnits && !options_.sourceGenerator && inputs.size() > 1 && !anyGpu)
    return buildShared(inputs, firstId);
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

namespace {

std::string oversizedMessage(const MeasureTask& task, size_t bytes, size_t limit) {
  return fmt::format("task '{}': the generated kernel is {:.1f} MB of C++, more than the builder compiles ({:.1f} MB): its loops "
                     "unroll or partition too far",
                     task.name, double(bytes) / 1048576.0, double(limit) / 1048576.0);
}

}  // namespace

BuildResult LocalBuilder::buildOne(const MeasureInput& given, int id) {
  auto start = Clock::now();
  auto deadline = start + options_.timeout;
  TESSEL_CHECK(given.task != nullptr, "LocalBuilder: candidate {} has no task", id);
  std::string kernel = kernelName(*given.task);
  MeasureInput input = given;
  if (given.task->onGpu()) {
    if (!given.reference) {
      BuildResult gpu = buildGpuCandidate(given, kernel, fmt::format("{}/candidate_{}.gpu", dir_.path(), id), options_.timeout);
      if (gpu.ok()) {
        gpu.args = argumentSpecs(given.task->dag);
        gpu.numInputs = int(given.task->dag.inputNames().size());
      }
      return gpu;
    }
    // A GPU task's reference is its naive schedule on the device's host CPU.
    auto onHost = std::make_shared<MeasureTask>(*given.task);
    onHost->target = given.task->hostTarget;
    onHost->gpuLimits.reset();
    input.task = onHost;
  }
  const MeasureTask& task = *input.task;

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

  if (isolated.output.size() > options_.maxSourceBytes)
    return buildError(MeasureErrorNo::InstantiationError, oversizedMessage(task, isolated.output.size(), options_.maxSourceBytes),
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

std::vector<BuildResult> LocalBuilder::buildShared(const std::vector<MeasureInput>& inputs, int64_t firstId) {
  std::vector<BuildResult> results(inputs.size());
  // 1. Each candidate's function, generated in an isolated child as buildOne does, with a
  //    kernel name of its own (they will share a translation unit).
  struct Generated {
    codegen::CFunctionSource function;
    codegen::CompileOptions compile;
    Clock::time_point start;
    double lowerSeconds = 0;
  };
  std::vector<std::optional<Generated>> generated(inputs.size());
  ThreadPool pool(std::min<int>(parallelism_, int(inputs.size())));
  pool.parallelFor(int(inputs.size()), [&](int i) {
    const MeasureInput& input = inputs[size_t(i)];
    auto start = Clock::now();
    try {
      TESSEL_CHECK(input.task != nullptr, "LocalBuilder: candidate {} has no task", firstId + i);
      Generated g;
      g.start = start;
      try {
        g.compile = options_.compileOptions ? *options_.compileOptions : codegen::compileOptionsForTarget(input.task->target);
      } catch (const Error& e) {
        results[size_t(i)] = buildError(MeasureErrorNo::InstantiationError, e.what(), start);
        return;
      }
      std::string kernel = fmt::format("{}_c{}", kernelName(*input.task), firstId + i);
      FunctionGenerator generate = options_.functionGenerator ? options_.functionGenerator : &LocalBuilder::generateFunction;
      auto isolated = runIsolated([&] { return generate(input, kernel).toJson().dump(); }, options_.timeout);
      using Status = IsolatedCallResult::Status;
      if (isolated.status == Status::TimedOut) {
        results[size_t(i)] = buildError(MeasureErrorNo::BuildTimeoutError,
                                        fmt::format("build timed out after {:.1f} s while lowering and generating code for task '{}'",
                                                    isolated.seconds, input.task->name),
                                        start);
      } else if (isolated.status == Status::Threw) {
        results[size_t(i)] = buildError(MeasureErrorNo::InstantiationError, isolated.output, start);
      } else if (isolated.status == Status::Crashed) {
        results[size_t(i)] = buildError(MeasureErrorNo::InstantiationError,
                                        fmt::format("lowering task '{}' crashed the build process: {}", input.task->name,
                                                    isolated.describe()),
                                        start);
      } else {
        g.function = codegen::CFunctionSource::fromJson(parseJson(isolated.output, "the lowering process's answer"));
        g.lowerSeconds = secondsSince(start);
        if (g.function.text.size() > options_.maxSourceBytes)
          results[size_t(i)] = buildError(MeasureErrorNo::InstantiationError,
                                          oversizedMessage(*input.task, g.function.text.size(), options_.maxSourceBytes), start);
        else
          generated[size_t(i)] = std::move(g);
      }
    } catch (const std::exception& e) {
      BuildResult r;
      r.errorNo = MeasureErrorNo::UnknownError;
      r.errorMessage = std::string("builder: ") + e.what();
      results[size_t(i)] = r;
    }
  });

  // 2. Units: the generated candidates of each set of compile options (one target per batch
  //    in practice), dealt round-robin into as many units as builds run at once.
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<size_t>> byOptions;
  std::vector<std::vector<size_t>> units;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!generated[i]) continue;
    if (generated[i]->function.text.size() > options_.sharedUnitMaxSourceBytes) units.push_back({i});  // alone
    else byOptions[{generated[i]->compile.compiler, generated[i]->compile.flags}].push_back(i);
  }
  for (const auto& [flags, members] : byOptions) {
    size_t first = units.size(), count = std::min(members.size(), size_t(parallelism_));
    units.resize(first + count);
    for (size_t k = 0; k < members.size(); ++k) units[first + k % count].push_back(members[k]);
  }
  auto finish = [&](size_t i, const std::string& library, double compileSeconds, double linkSeconds) {
    BuildResult r;
    r.libraryPath = library;
    r.kernelName = generated[i]->function.name;
    r.args = argumentSpecs(inputs[i].task->dag);
    r.numInputs = int(inputs[i].task->dag.inputNames().size());
    r.lowerSeconds = generated[i]->lowerSeconds;
    r.compileSeconds = compileSeconds;
    r.linkSeconds = linkSeconds;
    r.buildSeconds = secondsSince(generated[i]->start);
    results[i] = r;
  };
  pool.parallelFor(int(units.size()), [&](int u) {
    const std::vector<size_t>& unit = units[size_t(u)];
    std::vector<codegen::CFunctionSource> functions;
    for (size_t i : unit) functions.push_back(generated[i]->function);
    codegen::CompileOptions compile = generated[unit.front()]->compile;
    compile.timeout = options_.timeout * int(unit.size());
    std::string library = fmt::format("{}/unit_{}_{}.so", dir_.path(), firstId, u);
    codegen::CompileTimes times;
    try {
      codegen::compileSharedLibrary(codegen::assembleCSource(functions), library, compile, &times);
      {
        std::lock_guard lock(libraryMutex_);
        libraryUsers_[library] = int(unit.size());
      }
      // The unit's time, shared out: what each candidate cost the builder.
      for (size_t i : unit) finish(i, library, times.compileSeconds / double(unit.size()), times.linkSeconds / double(unit.size()));
      return;
    } catch (const Error&) {
      // 3. A unit that fails to compile: candidate by candidate, so that only the guilty fail.
    }
    for (size_t i : unit) {
      auto start = Clock::now();
      std::string own = fmt::format("{}/candidate_{}.so", dir_.path(), firstId + int64_t(i));
      // A timeout of its own: the unit's failure (a sibling that compiled too long) may have
      // used up the time since this candidate was generated.
      codegen::CompileOptions alone = generated[i]->compile;
      alone.timeout = options_.timeout;
      codegen::CompileTimes t;
      try {
        codegen::compileSharedLibrary(codegen::assembleCSource({generated[i]->function}), own, alone, &t);
        finish(i, own, t.compileSeconds, t.linkSeconds);
      } catch (const Error& e) {
        bool late = Clock::now() - start >= options_.timeout;
        results[i] = buildError(late ? MeasureErrorNo::BuildTimeoutError : MeasureErrorNo::CompileHostError,
                                late ? fmt::format("build timed out after {:.1f} s while compiling: {}", secondsSince(start), e.what())
                                     : std::string(e.what()),
                                start);
      }
    }
  });
  return results;
}

void LocalBuilder::discard(const BuildResult& result) {
  if (!result.ok() || result.libraryPath.empty() || options_.keepFiles) return;
  if (!result.gpuDevice.empty()) {  // a GPU module directory of its own
    std::error_code ignored;
    std::filesystem::remove_all(result.libraryPath, ignored);
    return;
  }
  {
    std::lock_guard lock(libraryMutex_);
    auto it = libraryUsers_.find(result.libraryPath);
    if (it != libraryUsers_.end()) {
      if (--it->second > 0) return;  // another candidate of the unit still needs it
      libraryUsers_.erase(it);
    }
  }
  std::error_code ignored;
  std::filesystem::remove(result.libraryPath, ignored);
  std::filesystem::remove(result.libraryPath + ".cpp", ignored);
}

}  // namespace tessel::tune
