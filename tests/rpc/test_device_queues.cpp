// The tracker's queue logic without the network: who gets which device, in what order, and
// what happens to devices that fall silent and to leases nobody renews.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "rpc/DeviceQueues.h"

using namespace tessel::rpc;
using namespace std::chrono_literals;

namespace {

KeySummary summaryOf(const DeviceQueues& q, const std::string& key) {
  for (const auto& s : q.summary())
    if (s.key == key) return s;
  return {key, 0, 0, 0};
}

/// Waits (bounded) until `pending` clients of `key` are waiting.
void waitForPending(const DeviceQueues& q, const std::string& key, int pending) {
  for (int i = 0; i < 400 && summaryOf(q, key).pending != pending; ++i) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(summaryOf(q, key).pending, pending);
}

}  // namespace

TEST(DeviceQueues, CountsDevicesPerKeyAndLeasesFreeOnes) {
  DeviceQueues q;
  auto now = Clock::now();
  q.registerDevice("pynq", "10.0.0.1:9090", "a", false, now);
  q.registerDevice("pynq", "10.0.0.2:9090", "b", false, now);
  q.registerDevice("rpi3b", "10.0.0.3:9090", "c", false, now);
  auto s = q.summary();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].key, "pynq");
  EXPECT_EQ(s[0].total, 2);
  EXPECT_EQ(s[0].free, 2);
  EXPECT_EQ(s[1].key, "rpi3b");

  auto lease = q.request("pynq", 0, 10s, Clock::now() + 1s);
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->key, "pynq");
  EXPECT_EQ(summaryOf(q, "pynq").free, 1);
  auto second = q.request("pynq", 0, 10s, Clock::now() + 1s);
  ASSERT_TRUE(second);
  EXPECT_NE(second->deviceId, lease->deviceId);
  EXPECT_EQ(summaryOf(q, "pynq").free, 0);
  // No third pynq: the request times out.
  EXPECT_FALSE(q.request("pynq", 0, 10s, Clock::now() + 50ms));
  EXPECT_TRUE(q.release(lease->leaseId).alive);
  EXPECT_EQ(summaryOf(q, "pynq").free, 1);
  EXPECT_FALSE(q.release(lease->leaseId).alive);  // twice: already ended
}

TEST(DeviceQueues, ServesWaitersByPriorityThenArrival) {
  DeviceQueues q;
  q.registerDevice("k", "h:1", "", false, Clock::now());
  auto held = q.request("k", 0, 10s, Clock::now() + 1s);
  ASSERT_TRUE(held);
  std::vector<int> order;
  std::mutex m;
  auto waiter = [&](int priority, int tag) {
    auto lease = q.request("k", priority, 10s, Clock::now() + 10s);
    ASSERT_TRUE(lease);
    {
      std::lock_guard lock(m);
      order.push_back(tag);
    }
    q.release(lease->leaseId);
  };
  std::thread low1(waiter, 1, 1);
  waitForPending(q, "k", 1);
  std::thread low2(waiter, 1, 2);
  waitForPending(q, "k", 2);
  std::thread high(waiter, 5, 3);
  waitForPending(q, "k", 3);
  q.release(held->leaseId);
  low1.join();
  low2.join();
  high.join();
  EXPECT_EQ(order, (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(summaryOf(q, "k").pending, 0);
}

TEST(DeviceQueues, ABusyServerIsNotFreeUntilItSaysSo) {
  DeviceQueues q;
  auto id = q.registerDevice("k", "h:1", "", /*busy=*/true, Clock::now());
  EXPECT_EQ(summaryOf(q, "k").free, 0);
  EXPECT_FALSE(q.request("k", 0, 10s, Clock::now() + 30ms));
  EXPECT_TRUE(q.heartbeat(id, false, Clock::now()));
  EXPECT_EQ(summaryOf(q, "k").free, 1);
  auto lease = q.request("k", 0, 10s, Clock::now() + 1s);
  ASSERT_TRUE(lease);
  // The client opens a session (busy), closes it (not busy) and releases: free again.
  q.heartbeat(id, true, Clock::now());
  q.heartbeat(id, false, Clock::now());
  EXPECT_EQ(summaryOf(q, "k").free, 0);  // still leased
  q.release(lease->leaseId);
  EXPECT_EQ(summaryOf(q, "k").free, 1);
}

TEST(DeviceQueues, DropsSilentDevicesAndTellsTheHolder) {
  DeviceQueues q(DeviceQueuesOptions{1000ms});
  auto t0 = Clock::now();
  auto quiet = q.registerDevice("k", "h:1", "", false, t0);
  auto chatty = q.registerDevice("k", "h:2", "", false, t0);
  auto lease = q.request("k", 0, 60s, Clock::now() + 1s);
  ASSERT_TRUE(lease);
  uint64_t leased = lease->deviceId;
  q.heartbeat(quiet == leased ? chatty : quiet, false, t0 + 900ms);
  q.expire(t0 + 1500ms);  // the leased device has been silent 1.5 s
  EXPECT_EQ(summaryOf(q, "k").total, 1);
  auto state = q.renew(lease->leaseId, t0 + 1500ms);
  EXPECT_FALSE(state.alive);
  EXPECT_NE(state.reason.find("stopped sending heartbeats"), std::string::npos) << state.reason;
  EXPECT_NE(state.reason.find(lease->address), std::string::npos) << state.reason;
  // The dropped server's next heartbeat is refused: it registers again.
  EXPECT_FALSE(q.heartbeat(leased, false, t0 + 1600ms));
}

TEST(DeviceQueues, LeasesRunOutUnlessRenewed) {
  DeviceQueues q(DeviceQueuesOptions{60000ms});
  auto t0 = Clock::now();
  auto id = q.registerDevice("k", "h:1", "", false, t0);
  auto lease = q.request("k", 0, 1000ms, Clock::now() + 1s);
  ASSERT_TRUE(lease);
  auto start = Clock::now();
  EXPECT_TRUE(q.renew(lease->leaseId, start + 800ms).alive);  // now good until start + 1.8 s
  q.heartbeat(id, false, start + 1500ms);
  q.expire(start + 1500ms);
  EXPECT_TRUE(q.renew(lease->leaseId, start + 1500ms).alive);
  q.expire(start + 3000ms);
  auto state = q.renew(lease->leaseId, start + 3000ms);
  EXPECT_FALSE(state.alive);
  EXPECT_NE(state.reason.find("expired"), std::string::npos) << state.reason;
  EXPECT_EQ(summaryOf(q, "k").free, 1);
}

TEST(DeviceQueues, ARestartedServerReplacesItsOldEntry) {
  DeviceQueues q;
  auto old = q.registerDevice("k", "h:1", "", false, Clock::now());
  auto lease = q.request("k", 0, 60s, Clock::now() + 1s);
  ASSERT_TRUE(lease);
  auto fresh = q.registerDevice("k", "h:1", "", false, Clock::now());
  EXPECT_NE(fresh, old);
  EXPECT_EQ(summaryOf(q, "k").total, 1);
  EXPECT_EQ(summaryOf(q, "k").free, 1);
  auto state = q.renew(lease->leaseId, Clock::now());
  EXPECT_FALSE(state.alive);
  EXPECT_NE(state.reason.find("registered again"), std::string::npos) << state.reason;
}

TEST(DeviceQueues, AServerShuttingDownLeavesAtOnce) {
  DeviceQueues q;
  auto id = q.registerDevice("k", "h:1", "", false, Clock::now());
  auto lease = q.request("k", 0, 60s, Clock::now() + 1s);
  ASSERT_TRUE(lease);
  EXPECT_TRUE(q.unregisterDevice(id));
  EXPECT_EQ(summaryOf(q, "k").total, 0);
  auto state = q.renew(lease->leaseId, Clock::now());
  EXPECT_FALSE(state.alive);
  EXPECT_NE(state.reason.find("shut down"), std::string::npos) << state.reason;
  EXPECT_FALSE(q.unregisterDevice(id));
}

TEST(DeviceQueues, UnknownIdsAndCancelledRequests) {
  DeviceQueues q;
  EXPECT_FALSE(q.heartbeat(12345, false, Clock::now()));
  auto state = q.renew(12345, Clock::now());
  EXPECT_FALSE(state.alive);
  EXPECT_NE(state.reason.find("unknown"), std::string::npos);
  std::atomic<bool> cancel{false};
  std::thread t([&] { cancel = true; });
  auto start = Clock::now();
  EXPECT_FALSE(q.request("nothing", 0, 1s, Clock::now() + 30s, [&] { return cancel.load(); }));
  EXPECT_LT(Clock::now() - start, 10s);
  t.join();
  EXPECT_EQ(summaryOf(q, "nothing").pending, 0);
}

TEST(DeviceQueues, IdsDifferBetweenTrackers) {
  // A restarted tracker must not mistake an old id for one of its own.
  DeviceQueues a, b;
  EXPECT_NE(a.registerDevice("k", "h:1", "", false, Clock::now()), b.registerDevice("k", "h:1", "", false, Clock::now()));
}

// A client that cancels its wait cannot know whether a lease was granted as it cancelled; it
// withdraws the request by its own id instead (the race that held a device for a whole lease).
TEST(DeviceQueues, AWithdrawnRequestGivesBackTheLeaseItWasGranted) {
  DeviceQueues q;
  q.registerDevice("k", "h:1", "", false, Clock::now());
  auto lease = q.request("k", 0, 60s, Clock::now() + 1s, {}, 7);
  ASSERT_TRUE(lease);
  EXPECT_EQ(summaryOf(q, "k").free, 0);
  EXPECT_TRUE(q.withdraw(7, Clock::now()));
  EXPECT_EQ(summaryOf(q, "k").free, 1);
  auto state = q.renew(lease->leaseId, Clock::now());
  EXPECT_FALSE(state.alive);
  EXPECT_NE(state.reason.find("withdrawn"), std::string::npos) << state.reason;
  EXPECT_FALSE(q.withdraw(0, Clock::now())) << "0 names no request";
}

TEST(DeviceQueues, ARequestWithdrawnBeforeItArrivesIsRefused) {
  DeviceQueues q;
  q.registerDevice("k", "h:1", "", false, Clock::now());
  EXPECT_FALSE(q.withdraw(9, Clock::now()));
  auto start = Clock::now();
  EXPECT_FALSE(q.request("k", 0, 60s, Clock::now() + 30s, {}, 9));
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(summaryOf(q, "k").free, 1);
  // Another request is served as usual.
  EXPECT_TRUE(q.request("k", 0, 60s, Clock::now() + 1s, {}, 10));
}

TEST(DeviceQueues, WithdrawingAWaitingRequestEndsItsWait) {
  DeviceQueues q;
  std::optional<GrantedLease> lease = GrantedLease{};
  auto start = Clock::now();
  std::thread t([&] { lease = q.request("k", 0, 60s, Clock::now() + 30s, {}, 11); });
  waitForPending(q, "k", 1);
  EXPECT_FALSE(q.withdraw(11, Clock::now()));
  t.join();
  EXPECT_FALSE(lease);
  EXPECT_LT(Clock::now() - start, 10s);
  q.registerDevice("k", "h:1", "", false, Clock::now());
  EXPECT_EQ(summaryOf(q, "k").free, 1) << "nobody is waiting any more";
}

TEST(DeviceQueues, WithdrawnRequestsThatNeverArriveAreForgotten) {
  DeviceQueues q;
  auto now = Clock::now();
  q.withdraw(13, now);
  q.expire(now + 11min);
  q.registerDevice("k", "h:1", "", false, Clock::now());
  EXPECT_TRUE(q.request("k", 0, 60s, Clock::now() + 1s, {}, 13));
}
