// libFuzzer harness: RPC messages. A real tracker and a real device server listen on loopback;
// each input is one call: its first byte picks one of their 13 methods, the rest is sent as the
// request's bytes exactly as a hostile client could send them (no protobuf encoding on our
// side: the services parse whatever arrives). Every call must end with a status, and both
// services must still answer a well-formed call afterwards.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <string>

#include "rpc/DeviceServer.h"
#include "rpc/Tracker.h"

using namespace tessel;

namespace {

struct Servers {
  std::unique_ptr<rpc::TrackerServer> tracker;
  std::unique_ptr<rpc::DeviceServer> device;
  std::unique_ptr<grpc::GenericStub> trackerStub, deviceStub;
};

constexpr const char* kTrackerMethods[] = {"Register", "Heartbeat", "Unregister", "RequestDevice",
                                           "RenewLease", "ReleaseLease", "Summary"};
constexpr const char* kDeviceMethods[] = {"OpenSession", "CloseSession", "Upload", "Measure", "GetHardwareInfo", "BenchmarkModule"};

Servers* servers() {
  static Servers* s = [] {
    auto* made = new Servers;
    rpc::TrackerOptions trackerOptions;
    trackerOptions.host = "127.0.0.1";
    trackerOptions.port = 0;
    made->tracker = std::make_unique<rpc::TrackerServer>(trackerOptions);
    rpc::DeviceServerOptions deviceOptions;
    deviceOptions.host = "127.0.0.1";
    deviceOptions.port = 0;
    deviceOptions.maxUploadBytes = 1 << 16;
    deviceOptions.sessionTimeoutSeconds = 1;
    made->device = std::make_unique<rpc::DeviceServer>(deviceOptions);
    auto channel = [](int port) {
      return grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
    };
    made->trackerStub = std::make_unique<grpc::GenericStub>(channel(made->tracker->port()));
    made->deviceStub = std::make_unique<grpc::GenericStub>(channel(made->device->port()));
    return made;
  }();
  return s;
}

grpc::Status call(grpc::GenericStub& stub, const std::string& method, const std::string& bytes) {
  grpc::ClientContext context;
  // Long enough for any answer; a RequestDevice for a key nobody serves waits this long.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  return done.get_future().get();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  servers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Servers* s = servers();
  constexpr size_t trackerCount = std::size(kTrackerMethods), deviceCount = std::size(kDeviceMethods);
  size_t pick = data[0] % (trackerCount + deviceCount);
  std::string payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (pick < trackerCount) call(*s->trackerStub, std::string("/tessel.rpc.proto.Tracker/") + kTrackerMethods[pick], payload);
  else call(*s->deviceStub, std::string("/tessel.rpc.proto.DeviceServer/") + kDeviceMethods[pick - trackerCount], payload);
  // Both still serve: an empty Summary and an empty GetHardwareInfo are well-formed requests.
  if (!call(*s->trackerStub, "/tessel.rpc.proto.Tracker/Summary", "").ok()) std::abort();
  grpc::Status info = call(*s->deviceStub, "/tessel.rpc.proto.DeviceServer/GetHardwareInfo", "");
  if (info.error_code() == grpc::StatusCode::UNAVAILABLE || info.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) std::abort();
  return 0;
}
