#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "support/Error.h"
#include "tune/IsolatedCall.h"

using namespace tessel;
using namespace tessel::tune;
using Status = IsolatedCallResult::Status;

TEST(IsolatedCall, ReturnsTheChildsString) {
  std::string big(300000, 'x');  // more than a pipe holds
  auto r = runIsolated([&] { return "ok:" + big; }, std::chrono::milliseconds(5000));
  ASSERT_EQ(r.status, Status::Returned) << r.describe();
  EXPECT_EQ(r.output, "ok:" + big);
}

TEST(IsolatedCall, ReportsTheExceptionMessage) {
  auto r = runIsolated([]() -> std::string { fail("step 2 (split): no iterator 'q' in stage 'C'"); },
                       std::chrono::milliseconds(5000));
  ASSERT_EQ(r.status, Status::Threw);
  EXPECT_EQ(r.output, "step 2 (split): no iterator 'q' in stage 'C'");
}

TEST(IsolatedCall, SurvivesACrash) {
  auto r = runIsolated([]() -> std::string {
    raise(SIGSEGV);
    return "unreachable";
  }, std::chrono::milliseconds(5000));
  ASSERT_EQ(r.status, Status::Crashed);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.describe().find("signal 11"), std::string::npos) << r.describe();
}

TEST(IsolatedCall, AnExitWithoutAnswerIsACrash) {
  auto r = runIsolated([]() -> std::string { _exit(3); }, std::chrono::milliseconds(5000));
  ASSERT_EQ(r.status, Status::Crashed);
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.describe(), "exited with code 3 without an answer");
}

TEST(IsolatedCall, KillsAHangAtTheDeadline) {
  auto start = std::chrono::steady_clock::now();
  auto r = runIsolated([]() -> std::string {
    std::this_thread::sleep_for(std::chrono::hours(1));
    return "";
  }, std::chrono::milliseconds(300));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, Status::TimedOut);
  EXPECT_LT(seconds, 2.0);
  EXPECT_NE(r.describe().find("timed out after"), std::string::npos);
}
