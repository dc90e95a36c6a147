#include "runtime/CudaGraph.h"

#include <fmt/format.h>

#include "runtime/CudaDevice.h"
#include "runtime/CudaDriver.h"
#include "support/Error.h"

namespace tessel::runtime {

struct CudaGraph::Handles {
  int deviceId = 0;
  cuda::CUgraph graph = nullptr;
  cuda::CUgraphExec exec = nullptr;
  ~Handles() {
    cuda::makeContextCurrent(deviceId);
    if (exec) cuda::driver().cuGraphExecDestroy(exec);
    if (graph) cuda::driver().cuGraphDestroy(graph);
  }
};

CudaGraph CudaGraph::capture(int deviceId, const std::function<void()>& launches) {
  const cuda::Driver& d = cuda::driver();
  cuda::CUstream stream = cuda::launchStream(deviceId);
  auto handles = std::make_shared<Handles>();
  handles->deviceId = deviceId;
  d.check(d.cuStreamBeginCapture(stream, cuda::kStreamCaptureModeRelaxed), fmt::format("graph capture on cuda:{}", deviceId));
  try {
    launches();
  } catch (...) {
    // End the capture so that the stream takes launches again; the partial graph is dropped.
    cuda::CUgraph partial = nullptr;
    if (d.cuStreamEndCapture(stream, &partial) == 0 && partial) d.cuGraphDestroy(partial);
    throw;
  }
  d.check(d.cuStreamEndCapture(stream, &handles->graph), fmt::format("the end of a graph capture on cuda:{}", deviceId));
  d.check(d.cuGraphInstantiateWithFlags(&handles->exec, handles->graph, 0), "graph instantiation");
  CudaGraph result;
  result.handles_ = std::move(handles);
  return result;
}

void CudaGraph::launch() const {
  TESSEL_CHECK(handles_ != nullptr, "launch of an empty CUDA graph");
  cuda::makeContextCurrent(handles_->deviceId);
  const cuda::Driver& d = cuda::driver();
  d.check(d.cuGraphLaunch(handles_->exec, cuda::launchStream(handles_->deviceId)), "graph launch");
}

}  // namespace tessel::runtime
