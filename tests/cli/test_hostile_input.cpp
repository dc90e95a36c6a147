// The `tessel` command used as a hostile but realistic user would: bad files, bad numbers,
// wrong paths, damaged modules and logs. Each case runs the real binary and checks that it
// ends with a clear message and a non-zero exit code, never an abort, a hang or lost data
// (issue 11's reproductions, one test each).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/TesselCli.h"
#include "graph/Build.h"
#include "graph/TestOps.h"
#include "runtime/Npy.h"
#include "support/Files.h"
#include "support/Json.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "target/HostCpu.h"
#include "vta/Program.h"

using tessel::testsupport::runTessel;

using namespace tessel;

namespace {

/// A failure as the one error path reports it: exit code 1 (not a signal, not an abort) and
/// one "error: " line with `part` in it.
void expectError(const SubprocessResult& r, const std::string& part, int exitCode = 1) {
  EXPECT_EQ(r.signal, 0) << r.describe() << "\n" << r.output;
  EXPECT_FALSE(r.timedOut) << r.output;
  EXPECT_EQ(r.exitCode, exitCode) << r.output;
  EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in:\n" << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

class HostileInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>("tessel-hostile");
    // A small module: out = relu(x . w), built by the graph layer.
    graph::testops::registerFusionTestOps();
    graph::Graph g;
    int x = g.addInput("data", {{1, 8}, DataType::float32()});
    auto w = runtime::Tensor::empty({8, 8}, DataType::float32());
    for (int i = 0; i < 64; ++i) w.dataAs<float>()[i] = float(i % 7) - 3.0f;
    int product = g.addOp("fz_matmul", {x, g.addConstant("w", w)});
    g.markOutput(g.addOp("fz_relu", {g.addOp("fz_add", {product, product})}));
    graph::BuildOptions options;
    options.fuse = false;  // three calls, so that the plan has an order to get wrong
    graph::buildGraph(g, module(), options);
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static std::string path(const std::string& name) { return dir_->path() + "/" + name; }
  static std::string module() { return path("module"); }

  /// A copy of the module directory with graph.json edited by `edit`.
  static std::string withPlan(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    std::string copy = path(name);
    std::filesystem::copy(module(), copy, std::filesystem::copy_options::recursive);
    nlohmann::json plan = parseJson(readFile(copy + "/graph.json"), "plan");
    edit(plan);
    writeFile(copy + "/graph.json", plan.dump(1));
    return copy;
  }

  static inline std::unique_ptr<TempDir> dir_;
};

// 1. Every `tessel vta` error used to escape as an uncaught exception (exit 134).
TEST_F(HostileInput, VtaErrorsEndAsMessages) {
  expectError(runTessel({"vta", "config", "/nonexistent.json"}), "error: cannot read VTA configuration /nonexistent.json: no such file");
  expectError(runTessel({"vta", "config", dir_->path()}), "it is a directory");
  expectError(runTessel({"vta", "run", "/dev/urandom"}), "cannot read VTA program /dev/urandom: it is a character device");

  vta::HardwareConfig config;
  vta::InstructionCodec codec(config);
  auto programFile = [&](const std::string& name, const std::vector<vta::Instruction>& instructions) {
    vta::Program program;
    program.config = config;
    for (const auto& i : instructions) program.instructions.push_back(codec.encode(i));
    program.save(path(name));
    return path(name);
  };
  vta::Instruction noOp;
  noOp.opcode = vta::Opcode::Load;
  noOp.memoryType = vta::MemoryType::MicroOp;
  vta::Instruction finish;
  vta::Instruction gemm;
  gemm.opcode = vta::Opcode::Gemm;
  gemm.resetAccumulator = true;
  gemm.microOpEnd = 1;
  gemm.iterationsOuter = gemm.iterationsInner = 1;
  gemm.dependencies.popPrevious = true;  // nothing ever pushes: a deadlock
  expectError(runTessel({"vta", "run", programFile("deadlock.json", {noOp, gemm, finish})}), "deadlock");
  expectError(runTessel({"vta", "run", programFile("nofinish.json", {noOp})}), "ended without FINISH");
  // An opcode no VTA has, written straight into the file.
  std::string badOpcode = programFile("opcode.json", {noOp, finish});
  nlohmann::json json = parseJson(readFile(badOpcode), "program");
  json["instructions"][1] = "00000000000000000000000000000007";
  writeFile(badOpcode, json.dump());
  expectError(runTessel({"vta", "run", badOpcode}), "unknown opcode 7");
}

// 2. Exceptions other than tessel's own (std::filesystem) aborted; tune -o checked its output
// only after tuning for the whole budget.
TEST_F(HostileInput, OutputPathsAreCheckedBeforeAnyWork) {
  writeFile(path("afile"), "x\n");
  expectError(runTessel({"compile", "--model", "resnet-18", "-o", path("afile")}), "--output " + path("afile") + ": it exists and is not a directory");
  expectError(runTessel({"compile", "--model", "resnet-18", "-o", path("afile") + "/sub"}), "is not a directory");
  auto tune = runTessel({"tune", "--model", "resnet-18", "--tasks", "16", "--n-trial", "2", "--log", path("p.log"), "-o", "/proc/tessel-x"});
  expectError(tune, "--output /proc/tessel-x");
  EXPECT_EQ(tune.output.find("Extract tasks"), std::string::npos) << tune.output;
  EXPECT_FALSE(std::filesystem::exists(path("p.log")));
}

// 3. A number beyond a double in any line killed every records command.
TEST_F(HostileInput, ALineWithAHugeNumberIsSkipped) {
  std::string log = path("huge.log");
  writeFile(log, "{\"version\":1e999}\n");
  auto show = runTessel({"records", "show", log});
  EXPECT_EQ(show.exitCode, 0) << show.output;
  EXPECT_NE(show.output.find("skipped 1 of 1 lines: line 1: not valid JSON"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("0 records of 0 tasks (1 line skipped)"), std::string::npos) << show.output;
  EXPECT_EQ(runTessel({"records", "best", log, "-o", path("huge.best")}).exitCode, 0);
  EXPECT_EQ(runTessel({"records", "distill", log, "-o", path("huge.top")}).exitCode, 0);
  // The same inside a step list given to `lower`, and integers that are not integers.
  writeFile(path("huge.json"), R"([{"step":"split","stage":"C","iterator":"i","factors":[1e999]}])");
  expectError(runTessel({"lower", "--op", "matmul", "--shape", "8,8,8", "--steps", path("huge.json")}), "not valid JSON");
  writeFile(path("big.json"), R"([{"step":"split","stage":"C","iterator":"i","factors":[1e23]}])");
  expectError(runTessel({"lower", "--op", "matmul", "--shape", "8,8,8", "--steps", path("big.json")}),
              "step 1: malformed split step: factors[0]: expected an integer, got 1e+23");
  writeFile(path("half.json"), R"([{"step":"split","stage":"C","iterator":"i","factors":[8.5]}])");
  expectError(runTessel({"lower", "--op", "matmul", "--shape", "8,8,8", "--steps", path("half.json")}),
              "factors[0]: expected an integer, got 8.5");
}

// 4. A truncated kernels.so died with SIGBUS and no message.
TEST_F(HostileInput, ATruncatedModuleIsRefused) {
  std::string copy = withPlan("truncated", [](nlohmann::json&) {});
  std::filesystem::resize_file(copy + "/kernels.so", 10000);
  expectError(runTessel({"run", copy}), "truncated");
  expectError(runTessel({"benchmark", copy}), "truncated");
}

// 5. A record that does not replay won "best" and pushed the valid ones out of the build.
TEST_F(HostileInput, ARecordThatDoesNotReplayIsNeverRanked) {
  std::string log = path("dense.log");
  // Without a confirmed decision (which would rank first), the ranking is by cost alone.
  auto tuned = runTessel({"tune", "--model", "resnet-18", "--tasks", "16", "--n-trial", "4", "--log", log, "--no-evaluate",
                       "--confirm-top", "0"});
  ASSERT_EQ(tuned.exitCode, 0) << tuned.output;
  // A copy of a real record, made the fastest ever measured, with a step naming no stage.
  std::string text = readFile(log);
  nlohmann::json record = parseJson(text.substr(0, text.find('\n')), "record");
  ASSERT_FALSE(record["schedule"]["steps"].empty());
  record["schedule"]["steps"][0]["stage"] = "no_such_stage";
  record["result"]["costs"] = nlohmann::json::array({2e-9});  // the least a record may carry is 1e-9 s
  std::ofstream(log, std::ios::app) << record.dump() << "\n";

  auto best = runTessel({"records", "best", log, "-o", path("dense.best")});
  ASSERT_EQ(best.exitCode, 0) << best.output;
  EXPECT_NE(best.output.find("does not replay: step 1 (" + record["schedule"]["steps"][0]["step"].get<std::string>() + ")"),
            std::string::npos)
      << best.output;
  std::string kept = readFile(path("dense.best"));
  EXPECT_EQ(std::count(kept.begin(), kept.end(), '\n'), 1);
  EXPECT_EQ(kept.find("no_such_stage"), std::string::npos) << kept;

  auto resumed = runTessel({"tune", "--model", "resnet-18", "--tasks", "16", "--n-trial", "4", "--log", log, "--resume", "--no-evaluate",
                         "--confirm-top", "0"});
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("applied tuned records to 1 of"), std::string::npos) << resumed.output;

  // The log builds a module without tuning again (apply-history-best), and says what it did.
  auto compiled = runTessel({"compile", "--model", "resnet-18", "--records", log, "--no-shipped-records", "-o", path("dense.module")});
  ASSERT_EQ(compiled.exitCode, 0) << compiled.output;
  EXPECT_NE(compiled.output.find(log + ": applied tuned records to 1 of"), std::string::npos) << compiled.output;
  EXPECT_NE(compiled.output.find("T_relu x"), std::string::npos) << compiled.output;  // fallbacks counted, not listed one by one
  EXPECT_EQ(runTessel({"run", path("dense.module")}).exitCode, 0);
  expectError(runTessel({"compile", "--model", "resnet-18", "--records", path("none.log"), "-o", path("x")}), "no such file");
}

// 9. A plan whose calls were reversed or emptied ran and printed garbage scores.
TEST_F(HostileInput, APlanMustDefineValuesBeforeUse) {
  std::string reversed = withPlan("reversed", [](nlohmann::json& plan) {
    std::reverse(plan["calls"].begin(), plan["calls"].end());
  });
  expectError(runTessel({"run", reversed}), "before any call computes it");
  std::string empty = withPlan("empty", [](nlohmann::json& plan) { plan["calls"] = nlohmann::json::array(); });
  expectError(runTessel({"run", empty}), "is never computed by any call");
  std::string negative = withPlan("negative", [](nlohmann::json& plan) { plan["tensors"][0]["shape"][1] = -8; });
  expectError(runTessel({"run", negative}), "shape[1]: -8 is out of range");
  EXPECT_EQ(runTessel({"run", module()}).exitCode, 0);
}

// 6. and 7. `tune --log` appended to any file, and read /dev/full until the kernel killed it.
TEST_F(HostileInput, TuneAppendsOnlyToARecordsLog) {
  std::string params = path("weights.params");
  ASSERT_EQ(runTessel({"params", "--model", "squeezenet_v1.1", "-o", params}).exitCode, 0);
  std::string before = readFile(params, file_kinds::kParams);
  expectError(runTessel({"tune", "--model", "resnet-18", "--tasks", "16", "--n-trial", "2", "--log", params}),
              "is not a records log");
  EXPECT_EQ(readFile(params, file_kinds::kParams), before);  // not a byte written
  expectError(runTessel({"tune", "--model", "resnet-18", "--log", "/dev/full"}), "/dev/full: it is a character device");
  expectError(runTessel({"records", "show", "/dev/zero"}), "it is a character device");
  expectError(runTessel({"records", "show", dir_->path()}), "it is a directory");
  // params -o replaces a file only when asked.
  expectError(runTessel({"params", "--model", "squeezenet_v1.1", "-o", params}), "the file exists; pass --force");
  EXPECT_EQ(runTessel({"params", "--model", "squeezenet_v1.1", "-o", params, "--force"}).exitCode, 0);
  expectError(runTessel({"run", module(), "--input", dir_->path()}), "it is a directory");
}

// 10. Numbers were not range-checked where they were read.
TEST_F(HostileInput, NumbersOutOfRangeAreRefusedAsWritten) {
  expectError(runTessel({"query", "--port", "70000"}), "--port: 70000 is out of range [1, 65535]", 2);
  expectError(runTessel({"tune", "--model", "resnet-18", "--log", path("n.log"), "--min-repeat-ms", "1e300"}),
              "--min-repeat-ms: 1e300 is out of range", 2);
  expectError(runTessel({"tune", "--model", "resnet-18", "--log", path("n.log"), "--number", "8.5"}), "--number: 8.5 is not an integer", 2);
  expectError(runTessel({"tune", "--model", "resnet-18", "--log", path("n.log"), "--runner", "rpc", "--key", "k", "--tracker",
                      "127.0.0.1:70000"}),
              "port 70000 is out of range [1, 65535]", 2);
  expectError(runTessel({"benchmark", module(), "--repeat", "0"}), "--repeat: 0 is out of range", 2);
  // Issue 39: --n-parallel 1024 was accepted on 2 cores (hundreds of compilers at once).
  int most = 4 * target::availableCores();
  expectError(runTessel({"tune", "--model", "resnet-18", "--log", path("n.log"), "--n-parallel", std::to_string(most + 1)}),
              fmt::format("--n-parallel: {} is out of range [0, {}]", most + 1, most), 2);
}

// 11. --runner rpc with a tracker nobody runs waited the whole --device-wait (60 s).
TEST_F(HostileInput, ADeadTrackerFailsAtOnce) {
  auto start = std::chrono::steady_clock::now();
  auto r = runTessel({"tune", "--model", "resnet-18", "--tasks", "16", "--log", path("rpc.log"), "--runner", "rpc", "--key", "k",
                   "--tracker", "127.0.0.1:1"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  expectError(r, "cannot query the tracker at 127.0.0.1:1");
  EXPECT_LT(seconds, 30) << "waited for the device wait instead of failing at once";
  EXPECT_EQ(r.output.find("Extract tasks"), std::string::npos) << r.output;
}

// 13. NaN in an input is worth a warning: a ReLU turns it into a number in the scores.
TEST_F(HostileInput, NaNInputsAreWarnedAbout) {
  auto input = runtime::Tensor::empty({1, 8}, DataType::float32());
  for (int i = 0; i < 8; ++i) input.dataAs<float>()[i] = i == 3 ? std::numeric_limits<float>::quiet_NaN() : 1.0f;
  runtime::saveNpy(input, path("nan.npy"));
  auto r = runTessel({"run", module(), "--input", path("nan.npy")});
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("warning: input 'data' from " + path("nan.npy") + " has 1 NaN value"), std::string::npos) << r.output;
}

// Issue 39, defect 2: one line of JSON nested 150,000 levels deep (300 KB) ended in SIGSEGV in
// every reader: the error path echoed the value with nlohmann's dump, which recursed until the
// stack overflowed. Each reader now refuses it at the 257th level, naming the file (and line).
TEST_F(HostileInput, DeeplyNestedJsonIsRefusedByEveryReader) {
  const size_t depth = 150000;
  const std::string deep = "{\"version\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
  const std::string refused = "JSON nested deeper than 256 levels";
  // A records log: the line is skipped with a warning that names the file and the line.
  std::string log = path("deep.log");
  writeFile(log, deep + "\n");
  const std::string skipped = "warning: " + log + ": skipped 1 of 1 lines: line 1: " + refused;
  for (const auto& arguments : std::vector<std::vector<std::string>>{
           {"records", "show", log}, {"records", "best", log, "-o", path("deep.best")}, {"records", "distill", log, "-o", path("deep.top")}}) {
    auto r = runTessel(arguments);
    EXPECT_EQ(r.signal, 0) << r.describe();
    EXPECT_EQ(r.exitCode, 0) << r.output;
    EXPECT_NE(r.output.find(skipped), std::string::npos) << arguments[1] << ":\n" << r.output;
  }
  auto compiled = runTessel({"compile", "--model", std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/models/two_inputs/model.onnx",
                          "--records", log, "--no-shipped-records", "-o", path("deep.module")});
  EXPECT_EQ(compiled.exitCode, 0) << compiled.output;
  EXPECT_NE(compiled.output.find(skipped), std::string::npos) << compiled.output;
  // tune reads an existing --log before any work, also without --resume; the dead tracker then
  // ends the run at once.
  auto tune = runTessel({"tune", "--model", "resnet-18", "--tasks", "16", "--log", log, "--runner", "rpc", "--key", "k", "--tracker",
                      "127.0.0.1:1"});
  expectError(tune, "cannot query the tracker");
  EXPECT_NE(tune.output.find(skipped), std::string::npos) << tune.output;

  // A whole file: a step list, a VTA configuration, a module's graph plan.
  std::string file = path("deep.json");
  writeFile(file, deep);
  expectError(runTessel({"lower", "--op", "matmul", "--shape", "8,8,8", "--steps", file}), file + ": " + refused);
  expectError(runTessel({"vta", "config", file}), "VTA config " + file + ": " + refused);
  std::string module = withPlan("deep_plan", [](nlohmann::json&) {});
  writeFile(module + "/graph.json", deep);
  expectError(runTessel({"run", module}), module + "/graph.json: " + refused);
}

// Issue 39, defect 9: records with a cost of 0 s or 5e-324 s (shown as inf GFLOPS), or with
// negative FLOPs, loaded and outranked every real measurement. They are refused at load, with
// the file and line, as negative costs were.
TEST_F(HostileInput, ImpossibleRecordValuesAreRefusedAtLoad) {
  std::string shipped = readFile(std::string(TESSEL_SOURCE_DIR) + "/records/cpu/x86_64-avx512.log");
  nlohmann::json real = parseJson(shipped.substr(0, shipped.find('\n')), "record");
  auto forged = [&](const char* pointer, nlohmann::json value) {
    nlohmann::json record = real;
    record[nlohmann::json::json_pointer(pointer)] = std::move(value);
    return record.dump() + "\n";
  };
  std::string log = path("forged.log");
  writeFile(log, real.dump() + "\n" + forged("/result/costs", {0.0}) + forged("/result/costs", {5e-324}) +
                     forged("/task/flops", -1.0) + forged("/result/costs", {-1.0}));
  auto show = runTessel({"records", "show", log});
  EXPECT_EQ(show.exitCode, 0) << show.output;
  for (const std::string& part :
       {"warning: " + log + ": skipped 4 of 5 lines: line 2: result.costs[0]: 0.0 s is less than any measurement takes (1e-09 s)",
        std::string("line 3: result.costs[0]: 5e-324 s is less than any measurement takes"),
        std::string("line 4: task.flops: -1.0 is out of range [0, 1e+18]"), std::string("line 5: result.costs[0]: a cost cannot be negative")})
    EXPECT_NE(show.output.find(part), std::string::npos) << "'" << part << "' not in:\n" << show.output;
  EXPECT_EQ(show.output.find("inf GFLOPS"), std::string::npos) << show.output;
  // The best of the log is the real measurement.
  ASSERT_EQ(runTessel({"records", "best", log, "-o", path("forged.best")}).exitCode, 0);
  std::string best = readFile(path("forged.best"));
  ASSERT_EQ(std::count(best.begin(), best.end(), '\n'), 1) << best;
  EXPECT_EQ(parseJson(best.substr(0, best.find('\n')), "best")["result"]["costs"], real["result"]["costs"]);
  auto compiled = runTessel({"compile", "--model", std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/models/two_inputs/model.onnx",
                          "--records", log, "--no-shipped-records", "-o", path("forged.module")});
  EXPECT_EQ(compiled.exitCode, 0) << compiled.output;
  EXPECT_NE(compiled.output.find("warning: " + log + ": skipped 4 of 5 lines: line 2: result.costs[0]"), std::string::npos)
      << compiled.output;
}

}  // namespace
