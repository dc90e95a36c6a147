// The `tessel` command: version (and --version), lower (print DAG, state and generated code of an
// example op), run-op (compile and time it), and the commands of the other files of cli/.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <csignal>
#include <cstring>
#include <iostream>
#include <sstream>

#include "cli/ClassifyCommand.h"
#include "cli/ModelCommand.h"
#include "cli/ModuleCommand.h"
#include "cli/OptionChecks.h"
#include "cli/RecordsCommand.h"
#include "cli/ReportErrors.h"
#include "cli/RpcCommands.h"
#include "cli/TuneCommand.h"
#include "cli/UnknownArguments.h"
#include "cli/VtaCommand.h"
#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "ops/Examples.h"
#include "ops/Schedules.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "runtime/Tensor.h"
#include "runtime/TimeEvaluator.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/Json.h"
#include "support/SignalCleanup.h"
#include "support/TempDir.h"

using namespace tessel;

namespace {

std::vector<int64_t> parseShape(const std::string& text) {
  std::vector<int64_t> shape;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      shape.push_back(std::stoll(item));
    } catch (...) {
      fail("--shape: '{}' is not an integer (expected a comma-separated list such as 64,64,64)", item);
    }
  }
  return shape;
}

schedule::State loadState(const te::ComputeDAG& dag, const std::string& stepsFile) {
  std::vector<schedule::StepPtr> steps;
  if (!stepsFile.empty()) {
    nlohmann::json j = parseJson(readFile(stepsFile, file_kinds::kStepList), stepsFile);
    try {
      steps = schedule::stepsFromJson(j);
    } catch (const Error& e) {
      throw e.withContext(stepsFile);
    }
  }
  try {
    return schedule::replay(dag, steps);
  } catch (const Error& e) {
    throw stepsFile.empty() ? e : e.withContext(stepsFile);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // SIGINT and SIGTERM remove what tessel was writing (SignalCleanup.h); past a file size limit a
  // write fails with EFBIG, reported with the file's name, instead of SIGXFSZ killing tessel.
  installSignalCleanup();
  signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"tessel: a deep-learning compiler with automatic performance tuning", "tessel"};
  app.require_subcommand(1);
  // Every option's --help shows its default (the subcommands take this setting when added).
  app.option_defaults()->always_capture_default();
  const std::string versionText = std::string("tessel ") + TESSEL_VERSION;
  app.set_version_flag("--version", versionText, "print the version and exit");
  auto version = app.add_subcommand("version", "print the version");
  std::string op, shape, stepsFile, target = "cpu";
  bool defaultSchedule = false;
  auto lower = app.add_subcommand("lower", "print the compute DAG, the scheduled state and the generated code of an example op");
  auto runOp = app.add_subcommand("run-op", "compile an example op with a schedule and time it");
  for (auto* c : {lower, runOp}) {
    c->add_option("--op", op, fmt::format("{}", fmt::join(ops::exampleNames(), ", ")))->required();
    c->add_option("--shape", shape, "the op's parameters, comma-separated (e.g. 64,64,64 for matmul M,N,K)")->required();
    c->add_option("--steps", stepsFile, "a JSON file with the step list to apply");
    c->add_flag("--default-schedule", defaultSchedule, "schedule with the default CPU rules (without it and --steps: naive)");
    c->add_option("--target", target, "target string, e.g. \"cpu -mcpu=native\"");
  }
  int repeat = 5;
  double minRepeatMs = 50;
  runOp->add_option("--repeat", repeat, "timed repeats")->check(cli::integerIn(1, 100000));
  runOp->add_option("--min-repeat-ms", minRepeatMs, "minimum time of one repeat")->check(cli::numberIn(0.0, 60000.0));
  cli::addVtaCommands(app);
  cli::addModuleCommands(app);
  cli::addClassifyCommand(app);
  cli::addModelCommands(app);
  cli::addRecordsCommands(app);
  cli::addTuneCommand(app);
  cli::addRpcCommands(app);
  // The one error path: the subcommands' callbacks run inside parse().
  try {
    app.parse(argc, argv);
    if (version->parsed()) {
      fmt::print("{}\n", versionText);
      return 0;
    }
    if (lower->parsed() || runOp->parsed()) {
      auto dag = ops::exampleByName(op, parseShape(shape));
      TESSEL_CHECK(!(defaultSchedule && !stepsFile.empty()), "--default-schedule and --steps exclude each other");
      auto state = defaultSchedule ? schedule::replay(dag, ops::defaultCpuSchedule(dag, ops::cpuScheduleOptionsFor(target::Target::parse(target))))
                                    : loadState(dag, stepsFile);
      auto function = passes::lower(state, op);
      std::string source = codegen::generateCSource({function});
      if (lower->parsed()) {
        fmt::print("==== compute DAG (workload key {}, {:.0f} FLOPs)\n{}", dag.workloadKey(), dag.flopCount(), dag.toString());
        fmt::print("==== state\n{}", state.toString());
        fmt::print("==== generated C++\n{}", source);
        return 0;
      }
      TempDir dir("tessel-run-op");
      auto options = codegen::compileOptionsForTarget(target::Target::parse(target));
      codegen::compileSharedLibrary(source, dir.path() + "/kernel.so", options);
      auto module = runtime::Module::load(dir.path() + "/kernel.so");
      auto kernel = module.kernel(op);
      std::vector<runtime::Tensor> args;
      for (auto& name : dag.inputNames()) {
        auto t = runtime::Tensor::empty(dag.op(name)->shape, dag.op(name)->dtype);
        std::memset(t.data(), 0, size_t(t.nbytes()));
        args.push_back(t);
      }
      for (auto& name : dag.outputNames()) args.push_back(runtime::Tensor::empty(dag.op(name)->shape, dag.op(name)->dtype));
      runtime::TimeEvaluatorOptions timing;
      timing.repeat = repeat;
      timing.minRepeatMs = minRepeatMs;
      auto result = runtime::timeFunction(kernel.bind(args), timing);
      fmt::print("{}: mean {:.4f} ms (std {:.4f} ms, median {:.4f} ms), {:.2f} GFLOPS\n", op, result.mean * 1e3,
                 result.stddev * 1e3, result.median * 1e3, dag.flopCount() / result.median / 1e9);
      return 0;
    }
  } catch (const CLI::ParseError& e) {
    // Exit code 2 for a command line that cannot run as written, apart from the 1 of a failed command.
    return cli::reportParseError(app, e);
  } catch (...) {
    return cli::reportCurrentException();
  }
  return 0;
}
