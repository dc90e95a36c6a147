// tessel-rpc-server, the device server a board runs, linked with the runtime and RPC only:
// registered with a real tracker on loopback, it measures the RPC runner's candidates (checked
// against their reference on the board, a crashing one costing only its worker), times a whole
// module for `tessel benchmark --runner rpc` and reports an OpenCL device's limits; and no code
// of the compiler, the tuners or their libraries is in the program.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "RpcTestSupport.h"
#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "rpc/RemoteDevice.h"
#include "rpc/RpcRunner.h"
#include "runtime/OpenclDevice.h"
#include "support/Subprocess.h"
#include "tune/TuneTestSupport.h"

using namespace tessel;
using namespace tessel::rpctest;
using testsupport::expectContains;

namespace {

/// A tracker on loopback and one tessel-rpc-server of `key` registered with it.
void startBoard(Cluster& c, const std::string& key) {
  c.serverCommand = {TESSEL_RPC_SERVER_PATH};
  c.startTracker();
  c.startServer(key);
}

}  // namespace

TEST(RpcServerProgram, MeasuresTheRpcRunnersCandidatesAndChecksThemOnTheBoard) {
  Cluster c;
  startBoard(c, "board");
  rpc::RpcRunnerOptions o;
  o.tracker = c.trackerAddress();
  o.key = "board";
  o.deviceWaitSeconds = 30;
  o.measure.number = 2;
  o.measure.repeat = 2;
  o.measure.timeoutSeconds = 5;
  o.measure.checkCorrectness = true;
  rpc::RpcRunner runner(o);
  tune::LocalBuilderOptions bo;
  bo.sourceGenerator = tunetest::faultySource;
  tune::LocalBuilder builder(bo);
  auto task = tunetest::smallMatmul();
  auto results = tune::measureBatch(
      builder, runner,
      {tunetest::candidate(task, ""), tunetest::candidate(task, "wrong"), tunetest::candidate(task, "segfault"),
       tunetest::candidate(task, "")});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok()) << results[0].errorMessage;
  EXPECT_EQ(results[0].costs.size(), 2u);
  EXPECT_EQ(results[1].errorNo, tune::MeasureErrorNo::WrongAnswerError) << results[1].errorMessage;
  EXPECT_EQ(results[2].errorNo, tune::MeasureErrorNo::RuntimeDeviceError) << results[2].errorMessage;
  expectContains(results[2].errorMessage, "signal 11");
  // The crash took its worker down, not the server: the next candidate is measured there.
  EXPECT_TRUE(results[3].ok()) << results[3].errorMessage;
  EXPECT_TRUE(c.server(0).running()) << c.server(0).output();
}

TEST(RpcServerProgram, TimesAWholeModuleForTesselBenchmark) {
  Cluster c;
  startBoard(c, "board");
  std::string module = c.dir() + "/module";
  auto compiled = testsupport::runTessel(
      {"compile", "--model", std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/models/gemm_matmul_softmax/model.onnx", "-o", module});
  ASSERT_TRUE(compiled.ok()) << compiled.output;
  auto timed = testsupport::runTessel({"benchmark", module, "--runner", "rpc", "--key", "board", "--tracker", c.trackerAddress(),
                                       "--repeat", "3", "--min-repeat-ms", "5"});
  ASSERT_TRUE(timed.ok()) << timed.output << "\nserver:\n" << c.server(0).output();
  expectContains(timed.output, "Mean inference time (std dev): ");
  expectContains(timed.output, "over 3 measurements of");
  expectContains(timed.output, "on the 'board' device at 127.0.0.1:" + std::to_string(c.serverPort(0)));
}

// A Mali-class board's server: GPU candidates on its OpenCL device, whose limits it reports (here
// PoCL's, read from the device by the runtime alone).
TEST(RpcServerProgram, ReportsItsOpenclDevicesLimits) {
  std::string why;
  if (!runtime::openclDeviceAvailable(&why)) GTEST_SKIP() << "no OpenCL device: " << why;
  Cluster c;
  c.serverCommand = {TESSEL_RPC_SERVER_PATH};
  c.startTracker();
  c.startServer("mali", {"--device", "opencl"});
  std::string address;
  auto info = rpc::queryRemoteHardware(c.trackerAddress(), "mali", {}, std::chrono::seconds(10), &address);
  EXPECT_EQ(info.gpuDevice, "opencl:0");
  EXPECT_GT(info.gpuLimits.maxThreadsPerBlock, 0);
  EXPECT_GT(info.gpuLimits.multiProcessorCount, 0);
  expectContains(info.gpuLimits.profile, "opencl:0 (");
  EXPECT_EQ(address, "127.0.0.1:" + std::to_string(c.serverPort(0)));
}

TEST(RpcServerProgram, TellsHowToServeVtaAndAnswersItsVersion) {
  auto vta = runSubprocess({TESSEL_RPC_SERVER_PATH, "--device", "vta"});
  EXPECT_EQ(vta.exitCode, 1) << vta.output;
  expectContains(vta.output, "--device vta: this server has no VTA worker of its own");
  auto typo = runSubprocess({TESSEL_RPC_SERVER_PATH, "--trackr", "127.0.0.1:9190"});
  EXPECT_EQ(typo.exitCode, 2) << typo.output;
  expectContains(typo.output, "did you mean --tracker?");
  auto version = runSubprocess({TESSEL_RPC_SERVER_PATH, "--version"});
  ASSERT_TRUE(version.ok()) << version.output;
  expectContains(version.output, "tessel-rpc-server 0.");
}

// The server's and its worker's defined symbols, demangled: the device server and the runtime
// are there; nothing of the compiler's layers (loop IR, tensor expressions, schedules, lowering,
// code generation, operators, graphs, drivers, VTA compilation), of the tuners or of their
// libraries (XGBoost, ONNX). The only pieces of the graph, passes and tune layers allowed are
// the runtime-only ones the server is made of: a GPU's limits and the measurement worker's client.
TEST(RpcServerProgram, LinksTheRuntimeAndRpcButNoCompiler) {
  const std::regex compiler(
      R"(tessel::(ir|te|schedule|codegen|ops|driver|vta|tune::autotvm|tune::ansor)::)"
      R"(|tessel::graph::(?!gpuLimitsOf|gpuLimitsForBuild|gpuHardwareParameters|\(anonymous namespace\)::infoOf))"
      R"(|tessel::passes::(?!GpuLimits))"
      R"(|tessel::tune::(LocalBuilder|LocalRunner(?!Options)|Record|TaskScheduler|HistoryBest|MeasureTask|makeMeasureTask))"
      R"(|XGBooster|onnx::|google::protobuf::compiler)");
  for (const std::string& program : {std::string(TESSEL_RPC_SERVER_PATH), std::string(TESSEL_DEVICE_WORKER_PATH)}) {
    auto symbols = runSubprocess({"nm", "-C", "--defined-only", program});
    ASSERT_TRUE(symbols.ok()) << symbols.output.substr(0, 2000);
    std::istringstream lines(symbols.output);
    std::string line, found;
    size_t count = 0;
    while (std::getline(lines, line)) {
      ++count;
      if (found.size() < 2000 && std::regex_search(line, compiler)) found += line + "\n";
    }
    EXPECT_TRUE(found.empty()) << program << " holds code of the compiler:\n" << found;
    // Not vacuous: the symbols are there, the runtime's among them.
    EXPECT_GT(count, 1000u) << program;
    expectContains(symbols.output, "tessel::runtime::Module::load");
    if (program == TESSEL_RPC_SERVER_PATH) expectContains(symbols.output, "tessel::rpc::DeviceServer::DeviceServer");
  }
}
