// The tracker and device servers as real processes on loopback: `tessel query` totals and
// pending counts, the token, a busy port, where they listen (loopback unless told, and never
// elsewhere without a token or --insecure), the device server's limits (upload size, names
// confined to its directory, one session at a time, the longest run), a measurement whose
// client went away killed at once, and malformed requests answered with errors instead of
// crashes.
#include <gtest/gtest.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <thread>

#include "RpcTestSupport.h"
#include "common/ErrorText.h"
#include "common/FakeWorker.h"
#include "common/TesselCli.h"
#include "rpc/DeviceSession.h"
#include "rpc/HardwareInfo.h"
#include "rpc/TrackerClient.h"
#include "support/Subprocess.h"
#include "tessel_rpc.grpc.pb.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::rpc;
using namespace tessel::rpctest;
using namespace std::chrono_literals;
using testsupport::errorOf;
using testsupport::expectContains;

namespace {

SubprocessResult query(const Cluster& c, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {tesselCli(), "query", "--host", "127.0.0.1", "--port", std::to_string(c.trackerPort())};
  argv.insert(argv.end(), extra.begin(), extra.end());
  SubprocessOptions o;
  o.timeout = 20s;
  return runSubprocess(argv, o);
}

/// This machine's IPv4 addresses other than loopback (none in a bare container).
std::vector<std::string> otherAddresses() {
  std::vector<std::string> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return addresses;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    if (std::string(text).rfind("127.", 0) != 0) addresses.push_back(text);
  }
  freeifaddrs(list);
  return addresses;
}

/// Whether a TCP connection to address:port is accepted.
bool accepts(const std::string& address, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, address.c_str(), &to.sin_addr);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  close(fd);
  return ok;
}

/// Waits (bounded) until process `pid` is gone; the seconds it took, or -1.
double secondsUntilGone(pid_t pid, std::chrono::seconds limit = 10s) {
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < limit) {
    if (kill(pid, 0) != 0) return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

/// Waits (bounded) until `tessel query` prints `line`.
void expectQueryLine(const Cluster& c, const std::string& line) {
  std::string last;
  for (int i = 0; i < 100; ++i) {
    last = query(c).output;
    if (last.find(line) != std::string::npos) return;
    std::this_thread::sleep_for(50ms);
  }
  ADD_FAILURE() << "'" << line << "' never shown; last output:\n" << last;
}

}  // namespace

TEST(RpcServices, QueryShowsTotalsFreeAndPending) {
  Cluster c;
  c.startTracker();
  expectContains(c.tracker().output(), "bind to 127.0.0.1:");
  for (int i = 0; i < 3; ++i) c.startServer("cpu3");
  ASSERT_TRUE(c.waitForDevices("cpu3", 3, 3));
  auto out = query(c);
  ASSERT_TRUE(out.ok()) << out.output;
  expectContains(out.output,
                 "Queue Status\n----------------------------------\nkey          total  free  pending\n"
                 "----------------------------------\ncpu3         3      3     0\n----------------------------------\n");

  // Lease all three; two more clients wait, one for a key nobody serves.
  TrackerClient client(c.trackerAddress(), {});
  std::vector<GrantedLease> leases;
  for (int i = 0; i < 3; ++i) {
    auto o = client.requestDevice("cpu3", 0, 5s, 60s);
    ASSERT_EQ(o.status, DeviceRequestOutcome::Status::Granted) << o.message;
    leases.push_back(o.lease);
  }
  RequestCanceller cancelFourth, cancelOther;
  auto fourth = std::async(std::launch::async, [&] { return client.requestDevice("cpu3", 0, 30s, 60s, &cancelFourth); });
  auto other = std::async(std::launch::async, [&] { return client.requestDevice("rpi3b", 0, 30s, 60s, &cancelOther); });
  expectQueryLine(c, "cpu3         3      0     1\n");
  expectQueryLine(c, "rpi3b        0      0     1\n");
  // Releasing one serves the waiting client at once.
  client.release(leases[0].leaseId);
  auto granted = fourth.get();
  EXPECT_EQ(granted.status, DeviceRequestOutcome::Status::Granted);
  EXPECT_EQ(granted.lease.deviceId, leases[0].deviceId);
  cancelOther.cancel();
  EXPECT_EQ(other.get().status, DeviceRequestOutcome::Status::Cancelled);
  // Nobody waits for rpi3b any more and nobody serves it: the key leaves the table.
  for (int i = 0; i < 100 && query(c).output.find("rpi3b") != std::string::npos; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(query(c).output.find("rpi3b"), std::string::npos);
  auto devices = query(c, {"--devices"});
  expectContains(devices.output, "Server List");
  expectContains(devices.output, "leased");
}

TEST(RpcServices, AServerStoppedWithSigtermLeavesTheQueueAtOnce) {
  Cluster c;
  c.deviceTimeout = 60;  // so that only the server's own goodbye can remove it in time
  c.startTracker();
  c.startServer("bye");
  c.startServer("bye");
  ASSERT_TRUE(c.waitForDevices("bye", 2));
  c.server(0).signal(SIGTERM);
  EXPECT_EQ(c.server(0).wait(), 0);
  EXPECT_TRUE(c.waitForDevices("bye", 1, -1, 10s));
}

TEST(RpcServices, ASecondTrackerOnABusyPortFailsClearly) {
  Cluster c;
  c.startTracker();
  SubprocessOptions o;
  o.timeout = 20s;
  auto r = runSubprocess({tesselCli(), "tracker", "--host", "127.0.0.1", "--port", std::to_string(c.trackerPort())}, o);
  EXPECT_EQ(r.exitCode, 1) << r.output;
  expectContains(r.output, fmt::format("cannot listen on 127.0.0.1:{}", c.trackerPort()));
}

TEST(RpcServices, AWrongTokenIsRefusedClearly) {
  Cluster c;
  c.token = "s3cret";
  c.startTracker();
  c.startServer("secure");
  ASSERT_TRUE(c.waitForDevices("secure", 1));
  auto none = query(c);
  EXPECT_EQ(none.exitCode, 1);
  expectContains(none.output, "the tracker requires a token and the call carried none");
  auto wrong = query(c, {"--token", "guess"});
  EXPECT_EQ(wrong.exitCode, 1);
  expectContains(wrong.output, "the tracker refused the call: wrong token");
  auto right = query(c, {"--token", "s3cret"});
  EXPECT_TRUE(right.ok()) << right.output;
  expectContains(right.output, "secure       1      1     0");
  // A server with the wrong token is refused and says so.
  ChildProcess bad({tesselCli(), "server", "--tracker", c.trackerAddress(), "--key", "secure", "--host", "127.0.0.1",
                    "--port", "0", "--token", "guess"},
                   c.dir() + "/bad_server.log");
  EXPECT_EQ(bad.wait(), 1);
  expectContains(bad.output(), "refused the registration");
  expectContains(bad.output(), "wrong token");
  // The device server checks the token too.
  std::string address = fmt::format("127.0.0.1:{}", c.serverPort(0));
  expectContains(errorOf([&] { DeviceSession s(address, RpcSecurity::withToken("guess"), "test"); }), "wrong token");
  DeviceSession ok(address, RpcSecurity::withToken("s3cret"), "test");
  EXPECT_GT(ok.hardwareInfo().cores, 0);
}

TEST(RpcServices, TheDeviceServerConfinesUploadsAndServesOneSessionAtATime) {
  Cluster c;
  ChildProcess server({tesselCli(), "server", "--host", "127.0.0.1", "--port", "0", "--max-upload-mb", "0.01"},
                      c.dir() + "/server.log");
  ASSERT_TRUE(server.waitForOutput("bind to")) << server.output();
  std::string address = fmt::format("127.0.0.1:{}", boundPort(server.output()));
  DeviceSession session(address, {}, "test");
  EXPECT_EQ(session.maxUploadBytes(), 10485);
  session.upload("small.so", std::string(1000, 'x'));
  auto tooBig = errorOf([&] { session.upload("big.so", std::string(20000, 'x')); });
  expectContains(tooBig, "upload of 'big.so' (20000 bytes)");
  expectContains(tooBig, "over this server's limit of 10485 bytes");
  // The client knows the limit and sends nothing over it; gRPC's own message-size check refuses
  // a message far over it before the service sees it.
  expectContains(errorOf([&] { session.upload("huge.so", std::string(3 << 20, 'x')); }), "over this server's limit");
  EXPECT_EQ(session.upload("chunked.so", std::string(10000, 'y'), 3000), 10000);  // 4 chunks
  std::string escape = "tessel-escape-" + std::to_string(getpid()) + ".so";
  expectContains(errorOf([&] { session.upload("../" + escape, "x"); }), "is a path");
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::temp_directory_path() / escape));
  expectContains(errorOf([&] { session.upload("..", "x"); }), "'..' is not a file name");
  expectContains(errorOf([&] { session.upload("", "x"); }), "'name' is empty");
  // The session as a whole holds at most 4 maximal uploads; overwriting a file does not add up.
  for (int i = 0; i < 3; ++i) session.upload("same.so", std::string(10000, 'x'));
  for (int i = 0; i < 2; ++i) session.upload(fmt::format("part{}.so", i), std::string(10000, 'x'));
  expectContains(errorOf([&] { session.upload("one-too-many.so", std::string(10000, 'x')); }),
                 "over its limit of 41940 bytes (4 x --max-upload-mb)");
  // Measuring a file that was never uploaded.
  tune::LocalRunnerOptions o;
  auto kernelOf = [](const std::string& library) {
    RemoteKernel k;
    k.library = library;
    k.kernel = k.taskName = "matmul";
    k.numInputs = 2;
    return k;
  };
  expectContains(errorOf([&] { session.measure(kernelOf("missing.so"), o); }), "'missing.so' was not uploaded in this session");
  // Measuring an uploaded file that is not a library: the worker says so, the server lives on.
  auto garbage = session.measure(kernelOf("small.so"), o);
  EXPECT_EQ(garbage.errorNo, tune::MeasureErrorNo::RuntimeDeviceError) << garbage.errorMessage;
  // One session at a time.
  auto busy = errorOf([&] { DeviceSession second(address, {}, "intruder"); });
  expectContains(busy, "the device server is busy: a session of test has been open for");
  auto info = session.hardwareInfo();
  EXPECT_GT(info.cores, 0);
  EXPECT_FALSE(info.arch.empty());
  EXPECT_GE(info.vectorBits, 128);
  session.close();
  DeviceSession next(address, {}, "next");  // free again
  EXPECT_TRUE(server.running());
}

TEST(RpcServices, UploadChunksMustFollowEachOther) {
  Cluster c;
  ChildProcess server({tesselCli(), "server", "--host", "127.0.0.1", "--port", "0"}, c.dir() + "/server.log");
  ASSERT_TRUE(server.waitForOutput("bind to")) << server.output();
  auto channel = grpc::CreateChannel(fmt::format("127.0.0.1:{}", boundPort(server.output())), grpc::InsecureChannelCredentials());
  auto stub = proto::DeviceServer::NewStub(channel);
  grpc::ClientContext openContext;
  proto::OpenSessionRequest open;
  proto::SessionReply opened;
  ASSERT_TRUE(stub->OpenSession(&openContext, open, &opened).ok());
  auto upload = [&](const std::string& name, int64_t offset, size_t size, proto::UploadReply* reply) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    proto::UploadRequest request;
    request.set_session_id(opened.session_id());
    request.set_name(name);
    request.set_offset(offset);
    request.set_data(std::string(size, 'z'));
    return stub->Upload(&context, request, reply);
  };
  proto::UploadReply reply;
  ASSERT_TRUE(upload("a.so", 0, 100, &reply).ok());
  EXPECT_EQ(reply.bytes(), 100);
  ASSERT_TRUE(upload("a.so", 100, 50, &reply).ok());
  EXPECT_EQ(reply.bytes(), 150);
  expectContains(upload("a.so", 50, 10, &reply).error_message(), "a chunk at offset 50, but 150 bytes of it were uploaded");
  expectContains(upload("b.so", 500, 10, &reply).error_message(), "a chunk at offset 500, but 0 bytes of it were uploaded");
  expectContains(upload("a.so", -1, 10, &reply).error_message(), "a negative offset -1");
  ASSERT_TRUE(upload("a.so", 0, 7, &reply).ok());  // the first chunk replaces the file
  EXPECT_EQ(reply.bytes(), 7);
  EXPECT_TRUE(server.running());
}

TEST(RpcServices, MalformedRequestsGetErrorsNotCrashes) {
  Cluster c;
  c.startTracker();
  auto channel = grpc::CreateChannel(c.trackerAddress(), grpc::InsecureChannelCredentials());
  auto stub = proto::Tracker::NewStub(channel);
  auto call = [&](auto method, const auto& request, auto* reply) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return (stub.get()->*method)(&context, request, reply);
  };
  proto::RegisterReply registered;
  proto::RegisterRequest reg;
  auto s = call(&proto::Tracker::Stub::Register, reg, &registered);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  expectContains(s.error_message(), "malformed request: 'key' is empty");
  reg.set_key("bad key!");
  reg.set_address(":9000");
  expectContains(call(&proto::Tracker::Stub::Register, reg, &registered).error_message(), "may hold only letters");
  reg.set_key("k");
  reg.set_address("nohost");
  expectContains(call(&proto::Tracker::Stub::Register, reg, &registered).error_message(), "'nohost' is not host:port");
  reg.set_address("h:99999");
  expectContains(call(&proto::Tracker::Stub::Register, reg, &registered).error_message(), "no valid port");
  proto::DeviceRequest request;
  request.set_key("k");
  request.set_timeout_ms(-5);
  proto::Lease lease;
  expectContains(call(&proto::Tracker::Stub::RequestDevice, request, &lease).error_message(), "'timeout_ms' must be between");
  // Bytes that are no protobuf message at all.
  grpc::GenericStub generic(channel);
  grpc::Slice slice(std::string("\xff\xff\xff\xff garbage", 12));
  grpc::ByteBuffer garbage(&slice, 1), response;
  grpc::ClientContext context;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&context, "/tessel.rpc.proto.Tracker/Register", {}, &garbage, &response,
                    [&](grpc::Status status) { done.set_value(status); });
  auto status = done.get_future().get();
  EXPECT_FALSE(status.ok());
  // Still serving.
  EXPECT_TRUE(query(c).ok());
  EXPECT_TRUE(c.tracker().running());

  // The device server's checks.
  size_t i = c.startServer("k2");
  auto device = proto::DeviceServer::NewStub(
      grpc::CreateChannel(fmt::format("127.0.0.1:{}", c.serverPort(i)), grpc::InsecureChannelCredentials()));
  proto::MeasureRequest measure;
  measure.set_library("x.so");
  measure.set_kernel("k");
  measure.set_number(0);
  proto::MeasureReply measured;
  grpc::ClientContext m1;
  auto ms = device->Measure(&m1, measure, &measured);
  EXPECT_EQ(ms.error_code(), grpc::INVALID_ARGUMENT);
  expectContains(ms.error_message(), "measure request: number must be between 1 and 1000000, got 0");
  measure.set_number(1);
  measure.set_repeat(1);
  measure.set_timeout_s(1);
  measure.set_session_id(42);
  grpc::ClientContext m2;
  ms = device->Measure(&m2, measure, &measured);
  EXPECT_EQ(ms.error_code(), grpc::FAILED_PRECONDITION);
  expectContains(ms.error_message(), "session 42 is not open");
  EXPECT_TRUE(c.server(i).running());
}

// A client whose cancelled RequestDevice may have been granted names the request instead of
// the lease it never learned: the tracker frees the device at once.
TEST(RpcServices, WithdrawingARequestFreesTheDeviceGrantedToIt) {
  Cluster c;
  c.startTracker();
  c.startServer("wd");
  ASSERT_TRUE(c.waitForDevices("wd", 1, 1));
  auto stub = proto::Tracker::NewStub(grpc::CreateChannel(c.trackerAddress(), grpc::InsecureChannelCredentials()));
  proto::DeviceRequest request;
  request.set_key("wd");
  request.set_timeout_ms(5000);
  request.set_lease_ms(60000);
  request.set_request_id(4242);
  proto::Lease lease;
  grpc::ClientContext granted;
  ASSERT_TRUE(stub->RequestDevice(&granted, request, &lease).ok());
  ASSERT_TRUE(c.waitForDevices("wd", 1, 0)) << "leased";
  proto::LeaseRef withdraw;
  withdraw.set_request_id(4242);
  proto::LeaseStatus status;
  grpc::ClientContext released;
  ASSERT_TRUE(stub->ReleaseLease(&released, withdraw, &status).ok());
  EXPECT_TRUE(status.alive()) << "a lease was ended";
  EXPECT_TRUE(c.waitForDevices("wd", 1, 1, 3s)) << "free again long before the 60 s lease runs out";
}

TEST(RpcServices, TlsLinksWorkAndPlainClientsAreTurnedAway) {
  Cluster c;
  std::string cert = c.dir() + "/cert.pem", key = c.dir() + "/key.pem";
  SubprocessOptions o;
  o.timeout = 60s;
  auto made = runSubprocess({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                             "-days", "1", "-subj", "/CN=localhost", "-addext",
                             "subjectAltName=DNS:localhost,IP:127.0.0.1"},
                            o);
  ASSERT_TRUE(made.ok()) << made.output;
  std::vector<std::string> serve = {"--tls-cert", cert, "--tls-key", key};
  c.startTracker(0, serve);
  std::vector<std::string> server = serve;
  server.insert(server.end(), {"--tls-ca", cert});
  size_t i = c.startServer("tls", server);
  auto secure = query(c, {"--tls-ca", cert});
  ASSERT_TRUE(secure.ok()) << secure.output;
  expectContains(secure.output, "tls          1      1     0");
  auto plain = query(c);
  EXPECT_EQ(plain.exitCode, 1);
  expectContains(plain.output, "cannot query the tracker");
  RpcSecurity tls;
  tls.tlsCa = cert;
  DeviceSession session(fmt::format("127.0.0.1:{}", c.serverPort(i)), tls, "tls-test");
  EXPECT_GT(session.hardwareInfo().cores, 0);
  expectContains(errorOf([&] { DeviceSession s(fmt::format("127.0.0.1:{}", c.serverPort(i)), {}, "plain"); }),
                 "cannot open a session");
  // A certificate file that is not one.
  auto bad = runSubprocess({tesselCli(), "tracker", "--port", "0", "--tls-cert", c.dir() + "/tracker_1.log", "--tls-key", key}, o);
  EXPECT_EQ(bad.exitCode, 1);
  expectContains(bad.output, "is not in PEM format");
}

TEST(RpcServices, QueryPrintsAServersHardware) {
  Cluster c;
  c.startTracker();
  size_t i = c.startServer("hw");
  SubprocessOptions o;
  o.timeout = 30s;
  auto r = runSubprocess({tesselCli(), "query", "--port", std::to_string(c.trackerPort()), "--hardware", "hw"}, o);
  ASSERT_TRUE(r.ok()) << r.output;
  expectContains(r.output, fmt::format("Hardware of a 'hw' device (127.0.0.1:{})", c.serverPort(i)));
  auto host = queryHostHardware();
  expectContains(r.output, fmt::format("  cores          {}\n", host.cores));
  // The bound the tuner holds the device's timings to (tune/PlausibleCost.h).
  EXPECT_GT(host.peakGflops, 0);
  expectContains(r.output, fmt::format("  peak GFLOPS    {:.0f} (fp32, an upper bound)\n", host.peakGflops));
  EXPECT_GT(host.cores, 0);
  EXPECT_GE(host.vectorBits, 128);
  EXPECT_GT(host.l1CacheBytes, 0);
  auto none = runSubprocess({tesselCli(), "query", "--port", std::to_string(c.trackerPort()), "--hardware", "none",
                             "--wait", "0.2"}, o);
  EXPECT_EQ(none.exitCode, 1);
  expectContains(none.output, "no device of key 'none' became free within 0.2 s");
}

TEST(RpcServices, ServersListenOnLoopbackUnlessToldAndElsewhereOnlyWithATokenOrInsecure) {
  Cluster c;
  SubprocessOptions o;
  o.timeout = 20s;
  for (std::string command : {"server", "tracker"}) {
    // Without --host: this machine only.
    ChildProcess plain({tesselCli(), command, "--port", "0"}, c.dir() + "/" + command + "_plain.log");
    ASSERT_TRUE(plain.waitForOutput("bind to")) << plain.output();
    expectContains(plain.output(), "bind to 127.0.0.1:");
    int port = boundPort(plain.output());
    EXPECT_TRUE(accepts("127.0.0.1", port));
    for (const std::string& address : otherAddresses()) EXPECT_FALSE(accepts(address, port)) << address;
    EXPECT_EQ(plain.output().find("warning"), std::string::npos) << plain.output();
    // Another address without a token: refused before anything starts, a usage error naming the ways out.
    auto refused = runSubprocess({tesselCli(), command, "--host", "0.0.0.0", "--port", "0"}, o);
    EXPECT_EQ(refused.exitCode, 2) << refused.output;
    expectContains(refused.output, "would listen on 0.0.0.0 without a token");
    expectContains(refused.output, "--token");
    expectContains(refused.output, "--insecure");
    EXPECT_EQ(refused.output.find("bind to"), std::string::npos);
    // --insecure starts it, and it warns at every start.
    ChildProcess insecure({tesselCli(), command, "--host", "0.0.0.0", "--port", "0", "--insecure"},
                          c.dir() + "/" + command + "_insecure.log");
    EXPECT_TRUE(insecure.waitForOutput("without a token (--insecure): anyone who can reach it can")) << insecure.output();
    expectContains(insecure.output(), "bind to 0.0.0.0:");
    expectContains(insecure.output(), "warning: the ");
    // A token is what makes another address safe: no warning.
    ChildProcess tokened({tesselCli(), command, "--host", "0.0.0.0", "--port", "0", "--token", "s3cret"},
                         c.dir() + "/" + command + "_token.log");
    ASSERT_TRUE(tokened.waitForOutput("bind to 0.0.0.0:")) << tokened.output();
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(tokened.output().find("warning"), std::string::npos) << tokened.output();
  }
  // A loopback server registering with a tracker elsewhere says why that tracker's clients
  // cannot reach it (192.0.2.1: a documentation address, never reached).
  ChildProcess lonely({tesselCli(), "server", "--tracker", "192.0.2.1:9190", "--key", "k", "--port", "0"},
                      c.dir() + "/lonely.log");
  EXPECT_TRUE(lonely.waitForOutput("note: this server listens on 127.0.0.1 only, so clients of the tracker at "
                                   "192.0.2.1:9190 on other machines cannot reach it; pass --host (with --token)"))
      << lonely.output();
}

namespace {

/// A device server running the fake worker, and raw calls on it.
struct FakeServer {
  explicit FakeServer(Cluster& c, const std::vector<std::string>& extra = {}) : cluster(c) {
    std::vector<std::string> argv = {tesselCli(), "server", "--port", "0", "--worker",
                                     testsupport::writeFakeWorker(c.dir(), "1e-3")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process = std::make_unique<ChildProcess>(argv, c.dir() + "/fake_server.log");
    TESSEL_CHECK(process->waitForOutput("bind to"), "the server did not start: {}", process->output());
    address = fmt::format("127.0.0.1:{}", boundPort(process->output()));
    stub = proto::DeviceServer::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  /// Opens a session with k.so uploaded; 0 when the server refuses (busy).
  uint64_t open() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    proto::OpenSessionRequest request;
    proto::SessionReply reply;
    if (!stub->OpenSession(&context, request, &reply).ok()) return 0;
    grpc::ClientContext uploadContext;
    uploadContext.set_deadline(std::chrono::system_clock::now() + 5s);
    proto::UploadRequest upload;
    upload.set_session_id(reply.session_id());
    upload.set_name("k.so");
    upload.set_data("x");
    proto::UploadReply uploaded;
    EXPECT_TRUE(stub->Upload(&uploadContext, upload, &uploaded).ok());
    return reply.session_id();
  }
  grpc::Status measure(grpc::ClientContext& context, uint64_t session, const std::string& kernel, double timeoutSeconds,
                       proto::MeasureReply* reply) {
    proto::MeasureRequest request;
    request.set_session_id(session);
    request.set_library("k.so");
    request.set_kernel(kernel);
    request.set_number(1);
    request.set_repeat(1);
    request.set_timeout_s(timeoutSeconds);
    return stub->Measure(&context, request, reply);
  }
  pid_t workerPid() const { return pid_t(std::stol(readFile(cluster.dir() + "/fake_worker.pid"))); }
  /// Seconds until a new client has a session and a measurement answered (-1: not within 10 s).
  double secondsUntilTheNextClientIsServed() {
    auto start = std::chrono::steady_clock::now();
    uint64_t session = 0;
    while (!(session = open()) && std::chrono::steady_clock::now() - start < 10s) std::this_thread::sleep_for(20ms);
    if (!session) return -1;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    proto::MeasureReply reply;
    auto status = measure(context, session, "matmul", 10, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(reply.error_no(), 0) << reply.message();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    grpc::ClientContext closeContext;
    proto::SessionRef ref;
    ref.set_session_id(session);
    proto::SessionReply closed;
    EXPECT_TRUE(stub->CloseSession(&closeContext, ref, &closed).ok());
    return seconds;
  }
  Cluster& cluster;
  std::unique_ptr<ChildProcess> process;
  std::string address;
  std::unique_ptr<proto::DeviceServer::Stub> stub;
};

}  // namespace

TEST(RpcServices, AMeasurementWhoseClientIsGoneIsKilledAndTheNextClientServedAtOnce) {
  Cluster c;
  FakeServer server(c);
  // 1. The client's deadline passes while its candidate hangs (it asked for a day).
  uint64_t first = server.open();
  ASSERT_NE(first, 0u);
  grpc::ClientContext late;
  late.set_deadline(std::chrono::system_clock::now() + 1s);
  proto::MeasureReply reply;
  auto status = server.measure(late, first, "sleep", 86400, &reply);
  EXPECT_EQ(status.error_code(), grpc::DEADLINE_EXCEEDED) << status.error_message();
  double gone = secondsUntilGone(server.workerPid());
  EXPECT_GE(gone, 0) << "the hanging measurement was never killed";
  EXPECT_LT(gone, 1.5);
  double served = server.secondsUntilTheNextClientIsServed();
  EXPECT_GE(served, 0) << "the next client was not served: " << server.process->output();
  EXPECT_LT(served, 3.0);
  expectContains(server.process->output(), "closed (its client went away during a measurement)");

  // 2. The client closes its stream (cancels) mid-measurement.
  uint64_t second = server.open();
  ASSERT_NE(second, 0u);
  grpc::ClientContext cancelled;
  cancelled.set_deadline(std::chrono::system_clock::now() + 600s);
  auto call = std::async(std::launch::async, [&] { return server.measure(cancelled, second, "sleep", 86400, &reply); });
  std::this_thread::sleep_for(500ms);
  pid_t worker = server.workerPid();
  cancelled.TryCancel();
  EXPECT_EQ(call.get().error_code(), grpc::CANCELLED);
  gone = secondsUntilGone(worker);
  EXPECT_GE(gone, 0) << "the hanging measurement was never killed";
  EXPECT_LT(gone, 1.5);
  served = server.secondsUntilTheNextClientIsServed();
  EXPECT_GE(served, 0);
  EXPECT_LT(served, 3.0);
  EXPECT_TRUE(server.process->running());
}

TEST(RpcServices, NoMeasurementRunsLongerThanTheServersMaximum) {
  Cluster c;
  FakeServer server(c, {"--max-run-timeout", "1"});
  DeviceSession session(server.address, {}, "test");
  session.upload("k.so", "x");
  RemoteKernel kernel;
  kernel.library = "k.so";
  kernel.kernel = kernel.taskName = "sleep";
  tune::MeasureOptions day;
  day.timeoutSeconds = 86400;
  auto start = std::chrono::steady_clock::now();
  auto r = session.measure(kernel, day);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_EQ(r.errorNo, tune::MeasureErrorNo::RunTimeoutError) << r.errorMessage;
  expectContains(r.errorMessage, "timed out after 1.0 s (capped from 86400.0 s)");
  expectContains(r.errorMessage, "this device server runs one measurement for at most 1 s (--max-run-timeout)");
  // The device goes on measuring.
  kernel.kernel = "matmul";
  EXPECT_TRUE(session.measure(kernel, day).ok());
  // A whole module's benchmark too.
  TempDir module;
  for (const char* name : {"graph.json", "kernels.so", "params.bin"}) writeFile(module.path() + "/" + name, "x");
  start = std::chrono::steady_clock::now();
  auto error = errorOf([&] { session.benchmarkModule(module.path(), {}, 86400); });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  expectContains(error, "the module ran past the timeout of 1.0 s");
  expectContains(error, "(--max-run-timeout)");
}
