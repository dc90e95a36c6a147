#include "RpcTestSupport.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "common/TesselCli.h"
#include "rpc/TrackerClient.h"
#include "support/Error.h"
#include "support/Files.h"

using tessel::testsupport::tesselCli;

namespace tessel::rpctest {

using namespace std::chrono_literals;

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& logPath) : logPath_(logPath) {
  pid_ = fork();
  TESSEL_CHECK(pid_ >= 0, "fork failed");
  if (pid_ == 0) {
    int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    setpgid(0, 0);
    // Killed at the end of the test, the process cannot remove its temporary folders: they go
    // beside its log, into the test's folder, which is removed after it.
    setenv("TMPDIR", std::filesystem::path(logPath).parent_path().c_str(), 1);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && status_ < 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string ChildProcess::output() const {
  try {
    return readFile(logPath_);
  } catch (const Error&) {
    return "";
  }
}

bool ChildProcess::waitForOutput(const std::string& text, std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (output().find(text) != std::string::npos) return true;
    if (status_ >= 0 || waitpid(pid_, nullptr, WNOHANG) == pid_) return output().find(text) != std::string::npos;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

void ChildProcess::signal(int sig) const { ::kill(pid_, sig); }

int ChildProcess::wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (status_ < 0) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(10ms);
  }
  return status_;
}

bool ChildProcess::running() { return wait(0ms) < 0; }

int boundPort(const std::string& output) {
  std::smatch m;
  static const std::regex bind("bind to [^\\n]*:([0-9]+)");
  if (std::regex_search(output, m, bind)) return std::stoi(m[1]);
  return 0;
}

Cluster::Cluster() : dir_("tessel-rpc-test") {}

void Cluster::startTracker(int port, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {tesselCli(), "tracker", "--host", "127.0.0.1", "--port", std::to_string(port),
                                   "--heartbeat-interval", "0.2", "--device-timeout",
                                   fmt::format("{}", deviceTimeout)};
  if (!token.empty()) argv.insert(argv.end(), {"--token", token});
  argv.insert(argv.end(), extra.begin(), extra.end());
  tracker_ = std::make_unique<ChildProcess>(argv, fmt::format("{}/tracker_{}.log", dir(), ++trackerStarts_));
  TESSEL_CHECK(tracker_->waitForOutput("bind to"), "the tracker did not start: {}", tracker_->output());
  trackerPort_ = boundPort(tracker_->output());
}

size_t Cluster::startServer(const std::string& key, const std::vector<std::string>& extra, bool waitRegistered) {
  size_t index = servers_.size();
  std::vector<std::string> argv = serverCommand.empty() ? std::vector<std::string>{tesselCli(), "server"} : serverCommand;
  argv.insert(argv.end(), {"--tracker", trackerAddress(), "--key", key, "--host", "127.0.0.1", "--port", "0", "--name",
                           fmt::format("server{}", index)});
  if (!token.empty()) argv.insert(argv.end(), {"--token", token});
  argv.insert(argv.end(), extra.begin(), extra.end());
  servers_.push_back(std::make_unique<ChildProcess>(argv, fmt::format("{}/server_{}.log", dir(), index)));
  auto& s = *servers_.back();
  TESSEL_CHECK(s.waitForOutput("bind to"), "server {} did not start: {}", index, s.output());
  serverPorts_.push_back(boundPort(s.output()));
  if (waitRegistered)
    TESSEL_CHECK(s.waitForOutput("registered with the tracker"), "server {} did not register: {}", index, s.output());
  return index;
}

testing::AssertionResult Cluster::waitForDevices(const std::string& key, int total, int free,
                                                 std::chrono::milliseconds timeout) const {
  rpc::TrackerClient client(trackerAddress(), rpc::RpcSecurity::withToken(token));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "the tracker never answered";
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      int t = 0, f = 0;
      std::vector<rpc::DeviceSummary> devices;
      for (const auto& k : client.summary(&devices, 2s))
        if (k.key == key) t = k.total, f = k.free;
      if (t == total && (free < 0 || f == free)) return testing::AssertionSuccess();
      last = fmt::format("the tracker lists {} device(s) of '{}', {} free:", t, key, f);
      for (const auto& d : devices)
        if (d.key == key) last += fmt::format(" {} ({}) {};", d.address, d.name, d.state);
    } catch (const Error& e) {
      last = e.what();
    }
    std::this_thread::sleep_for(30ms);
  }
  auto failure = testing::AssertionFailure() << fmt::format("after {} ms, waiting for {} device(s) of '{}' ({} free): {}",
                                                           timeout.count(), total, key, free, last);
  for (size_t i = 0; i < servers_.size(); ++i) failure << "\nserver " << i << " said:\n" << servers_[i]->output();
  return failure;
}

std::string Cluster::trackerAddress() const { return fmt::format("127.0.0.1:{}", trackerPort_); }

}  // namespace tessel::rpctest
