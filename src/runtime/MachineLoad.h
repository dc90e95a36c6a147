/// How busy this machine is with other work, and the kernel thread policy that follows from
/// it. A 2-thread kernel on a 2-core machine where another program holds a core runs at the
/// speed of its preempted thread, with a spread larger than its mean (resnet-18: 32.5 ± 12.2
/// ms, against 19.5 ± 0.3 ms with one thread); a kernel should use the cores that are free.
/// Also a probe: a fixed amount of fused multiply-adds per kernel thread, whose time tells
/// whether the threads kernels run on are getting their cores.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace tessel::runtime {

struct MachineLoad {
  int cores = 1;                  ///< online cores
  double otherBusyCores = 0;      ///< cores other processes kept busy during the sample
  double ourBusyCores = 0;        ///< cores this process and the ones named as ours kept busy
  /// Cores no other process used: at least 1.
  int freeCores() const;
  /// "other processes keep 1.0 of 2 cores busy"
  std::string describe() const;
};

/// Samples /proc/stat over `window` (sleeping meanwhile), discounting this process's own use and
/// that of `ours` (processes working for this one, such as a measurement worker: its OpenMP
/// threads spin for a while after each parallel region, which is not another program's load).
/// On systems without /proc/stat: every core free.
MachineLoad sampleMachineLoad(std::chrono::milliseconds window = std::chrono::milliseconds(60), const std::vector<int>& ours = {});

/// The threads kernels should run with: the free cores (TESSEL_NUM_THREADS, when set, wins).
int kernelThreadsFor(const MachineLoad& load);

/// The policy for a program about to run kernels (tessel run and benchmark, a deployed
/// application at start-up): samples the load and sets the kernel threads to the free cores.
/// Returns the sample (to say why, when the machine is busy).
MachineLoad useFreeCores();

/// Seconds the probe takes on the current kernel threads: each runs the same fixed chains of
/// multiply-adds once untimed (a core waking from idle is not a busy core), then `runs` times
/// (about 5.5 ms each on an idle 2020s core); in each run the slowest thread decides, and the
/// probe is the fastest run.
double probeKernelThreads(int runs = 3);

}  // namespace tessel::runtime
