#include "runtime/MachineLoad.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runtime/Threading.h"

namespace tessel::runtime {

namespace {

struct CpuTimes {
  bool valid = false;
  double busySeconds = 0;  ///< all processes' user, nice, system, irq and softirq time
  double ownSeconds = 0;   ///< this process's and the named ones' user and system time
};

/// A process's user and system time from /proc/PID/stat (`self` for this one); 0 when it is gone.
double processCpuSeconds(const std::string& pid, double tick) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and
  // 13th of them.
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size()) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 1; i <= 13 && rest >> field; ++i) {
    if (i == 12) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 13) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  return double(utime + stime) / tick;
}

CpuTimes readCpuTimes(const std::vector<int>& ours) {
  CpuTimes t;
  const double tick = double(sysconf(_SC_CLK_TCK));
  std::ifstream stat("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") return t;
  t.busySeconds = double(user + nice + system + irq + softirq) / tick;
  t.ownSeconds = processCpuSeconds("self", tick);
  for (int pid : ours)
    if (pid > 0 && pid != getpid()) t.ownSeconds += processCpuSeconds(std::to_string(pid), tick);
  t.valid = true;
  return t;
}

}  // namespace

// A core counts as taken from a third of it on: a program that sleeps now and then (a build, a
// writer to a pipe) still preempts a kernel thread at every wake-up.
int MachineLoad::freeCores() const { return std::max(1, cores - int(std::ceil(otherBusyCores - 0.3))); }

std::string MachineLoad::describe() const {
  return fmt::format("other processes keep {:.1f} of {} core{} busy", otherBusyCores, cores, cores == 1 ? "" : "s");
}

MachineLoad sampleMachineLoad(std::chrono::milliseconds window, const std::vector<int>& ours) {
  MachineLoad load;
  load.cores = int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  CpuTimes before = readCpuTimes(ours);
  auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(window);
  CpuTimes after = readCpuTimes(ours);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!before.valid || !after.valid || seconds <= 0) return load;
  // A process of ours that ended inside the window reads as 0 after: it counts as nothing.
  double own = std::max(0.0, after.ownSeconds - before.ownSeconds);
  double others = (after.busySeconds - before.busySeconds) - own;
  load.ourBusyCores = std::clamp(own / seconds, 0.0, double(load.cores));
  load.otherBusyCores = std::clamp(others / seconds, 0.0, double(load.cores));
  return load;
}

int kernelThreadsFor(const MachineLoad& load) {
  if (const char* env = std::getenv("TESSEL_NUM_THREADS"); env && std::atoi(env) > 0) return std::atoi(env);
  return load.freeCores();
}

MachineLoad useFreeCores() {
  MachineLoad load = sampleMachineLoad(std::chrono::milliseconds(100));
  setKernelThreadCount(kernelThreadsFor(load));
  return load;
}

namespace {

/// One thread's share of the probe: eight independent multiply-add chains keep the FMA units
/// busy without being a memory test. 2,000,000 steps: about 5.5 ms on the device host's Xeon
/// (2026), long enough that a thread's first microseconds out of an idle state do not decide.
void probeChains() {
  float a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int i = 0; i < 2000000; ++i)
    for (float& x : a) x = x * 0.9999999f + 1e-7f;
  volatile float sink = a[0] + a[7];
  (void)sink;
}

}  // namespace

double probeKernelThreads(int runs) {
  runs = std::max(1, runs);
  std::vector<double> slowest(size_t(runs), 0.0);
  // (A compiler without OpenMP code generation, clang with GNU's runtime, runs it serially.)
  [[maybe_unused]] int threads = kernelThreadCount();
#pragma omp parallel num_threads(threads)
  {
    // Untimed first: between two batches the cores sat idle while candidates compiled, and a
    // core's first fraction of a millisecond after that runs slower (a sleep state's exit, a
    // lower clock). With the probe a tenth as long and no warm-up, an idle 16-core Xeon read as
    // up to 4x slower than its fastest probe, a quarter to 40% of the time: "busy" for nothing
    // (probes 50 ms apart: 40% over 1.25x the fastest before, none now).
    probeChains();
    for (int r = 0; r < runs; ++r) {
#pragma omp barrier
      auto start = std::chrono::steady_clock::now();
      probeChains();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
#pragma omp critical(tessel_probe)
      slowest[size_t(r)] = std::max(slowest[size_t(r)], seconds);
    }
  }
  return *std::min_element(slowest.begin(), slowest.end());
}

}  // namespace tessel::runtime
