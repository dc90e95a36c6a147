// Where the tracker and the device servers may listen (rpc/ListenPolicy.h): loopback by
// default, another address only with a token or --insecure, which is warned about.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "rpc/DeviceServer.h"
#include "rpc/ListenPolicy.h"
#include "rpc/Tracker.h"

using namespace tessel;
using namespace tessel::rpc;
using testsupport::expectContains;

TEST(ListenPolicy, LoopbackAddressesAreTheOnlyOnesThisMachineAloneReaches) {
  for (const char* host : {"127.0.0.1", "127.0.0.53", "127.255.255.254", "::1", "[::1]", "localhost"})
    EXPECT_TRUE(isLoopbackHost(host)) << host;
  for (const char* host : {"0.0.0.0", "::", "[::]", "10.0.0.5", "192.168.1.20", "128.0.0.1", "fe80::1", "myhost",
                           "localhost.example.com", "", "127.0.0.1.nip.io"})
    EXPECT_FALSE(isLoopbackHost(host)) << host;
}

TEST(ListenPolicy, TheDefaultIsLoopback) {
  EXPECT_TRUE(isLoopbackHost(kDefaultListenHost));
  EXPECT_EQ(DeviceServerOptions().host, kDefaultListenHost);
  EXPECT_FALSE(DeviceServerOptions().insecure);
  EXPECT_EQ(TrackerOptions().host, kDefaultListenHost);
  EXPECT_FALSE(TrackerOptions().insecure);
}

TEST(ListenPolicy, ANonLoopbackAddressNeedsATokenOrInsecure) {
  for (auto service : {ListeningService::DeviceServer, ListeningService::Tracker}) {
    EXPECT_EQ(listenRefusal(service, "127.0.0.1", "", false), "");
    EXPECT_EQ(listenRefusal(service, "0.0.0.0", "s3cret", false), "");
    EXPECT_EQ(listenRefusal(service, "0.0.0.0", "", true), "");
    std::string refusal = listenRefusal(service, "0.0.0.0", "", false);
    expectContains(refusal, "would listen on 0.0.0.0 without a token");
    expectContains(refusal, "--token");
    expectContains(refusal, "--insecure");
    // Only the insecure case is warned about, at every start.
    EXPECT_EQ(listenWarning(service, "127.0.0.1", ""), "");
    EXPECT_EQ(listenWarning(service, "0.0.0.0", "s3cret"), "");
    expectContains(listenWarning(service, "0.0.0.0", ""), "warning: ");
    expectContains(listenWarning(service, "0.0.0.0", ""), "without a token (--insecure)");
  }
  expectContains(listenRefusal(ListeningService::DeviceServer, "10.0.0.5", "", false), "run native code on this machine");
  expectContains(listenRefusal(ListeningService::Tracker, "::", "", false), "register a device under any key");
}

TEST(ListenPolicy, TheServicesThemselvesRefuseAnUnsafeAddress) {
  // Library users (benchmarks, tests) get the same policy as the command line.
  TrackerOptions tracker;
  tracker.host = "0.0.0.0";
  tracker.port = 0;
  expectContains(testsupport::errorOf([&] { TrackerServer t(tracker); }), "without a token");
  DeviceServerOptions server;
  server.host = "0.0.0.0";
  server.port = 0;
  expectContains(testsupport::errorOf([&] { DeviceServer s(server); }), "without a token");
}
