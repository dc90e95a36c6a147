#include "tune/LocalRunner.h"

#include <fmt/format.h>

#include <filesystem>

#include "support/Clock.h"
#include "support/Error.h"

namespace tessel::tune {

LocalRunner::LocalRunner(LocalRunnerOptions options) : client_(std::move(options)) {}

LocalRunner::~LocalRunner() = default;

std::optional<double> LocalRunner::probeSeconds() { return client_.probeSeconds(); }

std::vector<int> LocalRunner::processIds() const { return client_.processIds(); }

bool LocalRunner::needsReference(const MeasureTask& task) const {
  return options().checkCorrectness && !references_.count(task.key());
}

void LocalRunner::setReference(const MeasureTask& task, const BuildResult& reference) {
  Reference ref{reference};
  if (reference.ok()) {
    std::string copy = fmt::format("{}/reference_{}.so", client_.directory(), references_.size());
    std::error_code ec;
    std::filesystem::copy_file(reference.libraryPath, copy, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      ref.build.errorNo = MeasureErrorNo::UnknownError;
      ref.build.errorMessage = fmt::format("cannot copy the reference library '{}': {}", reference.libraryPath, ec.message());
    } else {
      ref.build.libraryPath = copy;
    }
  }
  references_[task.key()] = ref;
}

std::vector<MeasureResult> LocalRunner::run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) {
  TESSEL_CHECK(inputs.size() == builds.size(), "LocalRunner::run: {} inputs but {} build results", inputs.size(),
               builds.size());
  std::vector<MeasureResult> results;
  results.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) results.push_back(runOne(inputs[i], builds[i]));
  return results;
}

MeasureResult LocalRunner::runOne(const MeasureInput& input, const BuildResult& build,
                                  const std::function<bool()>& cancelled) {
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](MeasureResult result, bool measured) {
    result.buildSeconds = build.buildSeconds;
    if (!measured) result.runSeconds = secondsSince(start);
    result.allCost = result.buildSeconds + result.runSeconds;
    result.timestamp = unixTimeSeconds();
    return result;
  };
  if (!build.ok()) return finish(errorResult(build.errorNo, build.errorMessage), false);
  TESSEL_CHECK(input.task != nullptr, "LocalRunner: a candidate has no task");
  const MeasureTask& task = *input.task;

  WorkerCandidate candidate;
  candidate.taskName = task.name;
  candidate.library = build.libraryPath;
  candidate.gpuDevice = build.gpuDevice;
  candidate.kernel = build.kernelName;
  candidate.numInputs = build.numInputs;
  candidate.coldCache = task.coldCache;
  candidate.stopAboveSeconds = input.stopAboveSeconds;
  candidate.tolerance = options().toleranceFor(task.target);
  if (options().checkCorrectness) {
    auto it = references_.find(task.key());
    if (it == references_.end())
      return finish(errorResult(MeasureErrorNo::UnknownError,
                                fmt::format("check_correctness: no reference registered for task '{}' ({})", task.name,
                                            task.key())),
                    false);
    const BuildResult& ref = it->second.build;
    if (!ref.ok())
      return finish(errorResult(MeasureErrorNo::UnknownError,
                                fmt::format("check_correctness: the reference (naive schedule) of task '{}' failed: {}",
                                            task.name, ref.errorMessage)),
                    false);
    candidate.referenceLibrary = ref.libraryPath;
    candidate.referenceKernel = ref.kernelName;
  }
  return finish(client_.measure(candidate, cancelled), true);
}

}  // namespace tessel::tune
