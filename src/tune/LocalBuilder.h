/// Builds candidates into shared libraries on this machine, several at once. Each build is
/// isolated: replaying the steps, lowering and generating C++ run in a forked child process
/// (IsolatedCall), then the system compiler runs as a subprocess, all under one deadline per
/// build. Whatever goes wrong becomes the candidate's BuildResult error, never the end of the
/// batch: a step that does not apply or a lowering error -> InstantiationError with its message
/// (a crash of the lowering too, naming the signal); a compiler failure -> CompileHostError
/// with the compiler's message; the deadline -> BuildTimeoutError. A GPU task's candidates are
/// built into GPU module directories (GpuCandidateBuild.h); its reference, for the host CPU.
///
/// A batch is compiled in as many translation units as builds run at once, several candidates
/// to a unit: one compiler run for four candidates costs 40% less than one each (process
/// start-up, the prelude, the link). A unit that fails is compiled again candidate by
/// candidate, so that an error is the failing candidate's alone. The libraries go to a
/// temporary directory the builder owns and removes when destroyed.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "support/TempDir.h"
#include "tune/MeasureBatch.h"

namespace tessel::tune {

/// Turns a candidate into the C++ source of a module with one kernel named `kernelName`. Runs
/// in the isolated child; may throw (InstantiationError) or crash.
using SourceGenerator = std::function<std::string(const MeasureInput& input, const std::string& kernelName)>;
/// The same for a candidate that shares a translation unit: its function alone.
using FunctionGenerator = std::function<codegen::CFunctionSource(const MeasureInput& input, const std::string& kernelName)>;

/// The most builds at once on this machine: 4 per core this process may use. A build is a compiler run, bound by the
/// CPU, so more than a few per core only add memory (each holds 0.2-1 GB): `--n-parallel 1024`
/// on 2 cores would start hundreds of compilers.
int mostParallelBuilds();

struct LocalBuilderOptions {
  int nParallel = 0;                             ///< builds at once; 0 = the cores; at most mostParallelBuilds()
  std::chrono::milliseconds timeout{10000};      ///< per build, instantiation and compilation together
  /// Compiler and flags; unset = codegen::compileOptionsForTarget(task target).
  std::optional<codegen::CompileOptions> compileOptions;
  /// Source generation; unset = LocalBuilder::generateSource. Tests put faults in here.
  SourceGenerator sourceGenerator;
  /// Function generation for shared units; unset = LocalBuilder::generateFunction. Tests too.
  FunctionGenerator functionGenerator;
  bool keepFiles = false;                        ///< keep the directory (and every source) for inspection
  /// Compile a batch's candidates together, a unit per parallel build (false: one library per
  /// candidate; also the case with a custom sourceGenerator, which makes whole sources).
  bool shareTranslationUnits = true;
  /// A candidate whose generated C++ is larger fails without compiling (InstantiationError):
  /// a schedule that unrolls and partitions that far (the auto-scheduler meets 2-40 MB) takes
  /// the compiler minutes, and code of that size runs out of the instruction cache anyway.
  /// The default schedules of the zoo's largest functions are below 0.5 MB.
  size_t maxSourceBytes = size_t(2) << 20;
  /// Candidates larger than this compile in a unit of their own, so that a slow one cannot
  /// make its unit time out for the others.
  size_t sharedUnitMaxSourceBytes = size_t(512) << 10;
};

class LocalBuilder : public Builder {
 public:
  explicit LocalBuilder(LocalBuilderOptions options = {});
  LocalBuilder(const LocalBuilder&) = delete;
  LocalBuilder& operator=(const LocalBuilder&) = delete;

  const LocalBuilderOptions& options() const { return options_; }
  int parallelism() const { return parallelism_; }
  /// Where the libraries go.
  const std::string& directory() const { return dir_.path(); }

  /// Builds every input; the results are in input order, one per input. Never throws for a
  /// bad candidate.
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override;
  /// Removes a successful build's library and source (the runner no longer needs them; a
  /// library shared by several candidates goes with the last of them). A failed build's files
  /// stay: its error message may name its source.
  void discard(const BuildResult& result) override;

  /// The default source generation: replay the steps on the task's DAG, lower, generate C++.
  static std::string generateSource(const MeasureInput& input, const std::string& kernelName);
  /// The same, as one function of a shared translation unit.
  static codegen::CFunctionSource generateFunction(const MeasureInput& input, const std::string& kernelName);
  /// The kernel's symbol for a task: its name made a C identifier ("default_function" if empty).
  static std::string kernelName(const MeasureTask& task);
  /// The kernel's arguments, from the task's DAG: inputs then outputs.
  static std::vector<runtime::ArgSpec> argumentSpecs(const te::ComputeDAG& dag);

 private:
  BuildResult buildOne(const MeasureInput& input, int id);
  std::vector<BuildResult> buildShared(const std::vector<MeasureInput>& inputs, int64_t firstId);

  LocalBuilderOptions options_;
  std::mutex libraryMutex_;
  std::map<std::string, int> libraryUsers_;  ///< shared libraries -> candidates not yet discarded
  int parallelism_;
  TempDir dir_;
  std::atomic<int64_t> nextId_{0};
};

}  // namespace tessel::tune
