// The remote-board flow on any machine: a device server registered as aarch64-qemu measures
// with the aarch64 build of the measurement worker under qemu-user; `tessel tune --target
// "cpu -mtriple=aarch64-linux-gnu" --runner rpc` cross-compiles candidates, measures them there
// through the tracker, logs them, and builds the network for aarch64 with the best record.
// Timings under emulation mean nothing; the flow is what is tested.
#include <gtest/gtest.h>

#include <elf.h>

#include <fstream>

#include "RpcTestSupport.h"
#include "codegen/Toolchain.h"
#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "rpc/DeviceSession.h"
#include "support/Subprocess.h"
#include "tune/RecordLog.h"
#include "tune/WorkerProcess.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::rpctest;
using namespace std::chrono_literals;
using testsupport::errorOf;
using testsupport::expectContains;

namespace {

/// e_machine of an ELF file (EM_AARCH64 = 183), or -1.
int elfMachine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header)) return -1;
  return header.e_machine;
}

}  // namespace

TEST(RpcCross, TheTargetTripleSelectsTheCrossCompiler) {
  auto o = codegen::compileOptionsForTarget(target::Target::parse("cpu -mtriple=aarch64-linux-gnu"));
  EXPECT_EQ(o.compiler, "aarch64-linux-gnu-gcc");
  EXPECT_EQ(o.flags[1], "-march=armv8-a");
  expectContains(errorOf([] { target::Target::parse("cpu -mtriple=riscv64-linux-gnu"); }),
                 "-mtriple=riscv64-linux-gnu names an architecture tessel cannot compile for");
}

#ifdef TESSEL_AARCH64_WORKER
TEST(RpcCross, TunesADenseTaskOnAnEmulatedAarch64BoardThroughTheTracker) {
  Cluster c;
  c.startTracker();
  size_t s = c.startServer("aarch64-qemu", {"--worker", TESSEL_AARCH64_WORKER, "--arch", "aarch64"});
  SubprocessOptions quick;
  quick.timeout = 30s;
  auto hardware = runSubprocess({tesselCli(), "query", "--port", std::to_string(c.trackerPort()), "--hardware",
                                 "aarch64-qemu"}, quick);
  ASSERT_TRUE(hardware.ok()) << hardware.output;
  expectContains(hardware.output, fmt::format("Hardware of a 'aarch64-qemu' device (127.0.0.1:{})", c.serverPort(s)));
  expectContains(hardware.output, "  arch           aarch64\n");
  expectContains(hardware.output, "  vector bits    128\n");
  expectContains(hardware.output, "tessel-device-worker-qemu");
  std::string log = c.dir() + "/aarch64.log", module = c.dir() + "/module";
  SubprocessOptions o;
  o.timeout = 300s;
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--ops", "dense", "--target",
                          "cpu -mtriple=aarch64-linux-gnu", "--tuner", "random", "--n-trial", "3", "--batch-size", "3",
                          "--number", "1", "--repeat", "1", "--cooldown-interval", "0", "--runner", "rpc", "--key",
                          "aarch64-qemu", "--tracker", c.trackerAddress(), "--log", log, "--no-evaluate", "-o", module},
                         o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "Progress: (3/3)");
  auto records = tune::readRecords(log);
  ASSERT_EQ(records.records.size(), 4u) << r.output;  // three trials and the confirmation's decision
  EXPECT_TRUE(records.records.back().result.confirmed);
  for (const auto& record : records.records) {
    EXPECT_TRUE(record.ok()) << record.result.errorMessage;
    // The target the kernels were scheduled for: the board's cores, as it reports them.
    EXPECT_EQ(record.target.rfind("cpu -mtriple=aarch64-linux-gnu -num-cores=", 0), 0u) << record.target;
  }
  // The build replayed the best record and cross-compiled the whole network.
  expectContains(r.output, "applied tuned records to 1 of");
  EXPECT_EQ(elfMachine(module + "/kernels.so"), EM_AARCH64);
}

TEST(RpcCross, TheAarch64DeviceWorkerAlsoTimesModules) {
  // A whole network under emulation takes seconds per run; checking that the emulated worker
  // takes module requests and reports a bad module is enough here.
  TempDir dir;
  tune::WorkerProcess worker({TESSEL_AARCH64_WORKER}, dir.path() + "/stderr");
  auto ready = worker.receive(60s);
  ASSERT_EQ(ready.status, tune::WorkerProcess::Reply::Status::Line) << worker.stderrTail();
  expectContains(ready.line, "\"modules\":true");
  ASSERT_TRUE(worker.send(R"({"id": 5, "module": "/nonexistent", "number": 1, "repeat": 1})"));
  auto reply = worker.receive(60s);
  ASSERT_EQ(reply.status, tune::WorkerProcess::Reply::Status::Line);
  expectContains(reply.line, "\"error_no\":4");
  expectContains(reply.line, "/nonexistent/graph.json");
}
#endif
