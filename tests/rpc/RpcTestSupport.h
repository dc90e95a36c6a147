/// Test support for remote measurement: real `tessel tracker` and `tessel server` processes on
/// loopback (ports chosen by the system, read back from their "bind to" lines), with short
/// heartbeats so that a dropped server is noticed within a second or two.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/TempDir.h"

namespace tessel::rpctest {

/// A child process whose stdout and stderr go to a file; killed (SIGKILL) when destroyed.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& logPath);
  ~ChildProcess();
  pid_t pid() const { return pid_; }
  std::string output() const;
  /// Waits until the output contains `text`; false on timeout or when the child exited.
  bool waitForOutput(const std::string& text, std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
  void signal(int sig) const;
  /// Waits for the child to exit; its exit code (128 + signal when killed). -1 on timeout.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  bool running();

 private:
  pid_t pid_ = -1;
  std::string logPath_;
  int status_ = -1;
};

/// A tracker and device servers for one test.
class Cluster {
 public:
  Cluster();
  /// Starts the tracker (port 0: any), with extra arguments (e.g. --token).
  void startTracker(int port = 0, const std::vector<std::string>& extra = {});
  /// Starts a server of `key`; returns its index. Waits until it has registered.
  size_t startServer(const std::string& key, const std::vector<std::string>& extra = {}, bool waitRegistered = true);
  /// Waits until the tracker lists `total` devices of `key`, `free` of them free (-1: any).
  /// On failure, says what the tracker listed last (each device's state) and what servers said.
  testing::AssertionResult waitForDevices(const std::string& key, int total, int free = -1,
                      std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
  std::string trackerAddress() const;
  int trackerPort() const { return trackerPort_; }
  ChildProcess& tracker() { return *tracker_; }
  ChildProcess& server(size_t i) { return *servers_.at(i); }
  int serverPort(size_t i) const { return serverPorts_.at(i); }
  const std::string& dir() const { return dir_.path(); }
  std::string token;  ///< passed to every process started and to the clients
  /// The program (and its first arguments) startServer runs; empty: `tessel server`.
  std::vector<std::string> serverCommand;
  double deviceTimeout = 1.5;  ///< the tracker's, in seconds

 private:
  TempDir dir_;
  std::unique_ptr<ChildProcess> tracker_;
  int trackerPort_ = 0;
  int trackerStarts_ = 0;
  std::vector<std::unique_ptr<ChildProcess>> servers_;
  std::vector<int> serverPorts_;
};

/// The port of a "bind to HOST:PORT" line in `output`; 0 when there is none.
int boundPort(const std::string& output);

}  // namespace tessel::rpctest
