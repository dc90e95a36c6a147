// tessel-measure-worker: a long-lived process that measures candidate kernels for a runner,
// one JSON request per line on stdin, one JSON reply per line on stdout (MeasureSession.h has
// the protocol). Linked against the runtime library only. A candidate that crashes or hangs
// takes only this process down; the runner starts a new one.
#include "tune/worker/WorkerLoop.h"

int main(int argc, char** argv) {
  tessel::tune::worker::WorkerLoopOptions options;
  options.programName = "tessel-measure-worker";
  options.description = "Measures tessel kernels: reads one JSON request per line on stdin and writes one JSON reply per line on stdout";
  return tessel::tune::worker::runWorkerLoop(argc, argv, options);
}
