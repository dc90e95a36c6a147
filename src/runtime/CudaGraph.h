/// A CUDA graph of a launch sequence: the kernels a function launches on a device's launch
/// stream (CudaDevice.h) are captured once (cuStreamBeginCapture / cuStreamEndCapture), made
/// executable (cuGraphInstantiate), and replayed with one cuGraphLaunch. A graph node costs
/// about 0.8 us on an H100 against 3-5 us for a launch from the host, which is most of a small
/// network's time at batch 1. The graph replays on the same buffers it was captured on.
#pragma once
#include <functional>
#include <memory>

namespace tessel::runtime {

class CudaGraph {
 public:
  /// Captures what `launches` queues on cuda:`deviceId`'s launch stream. Throws Error with the
  /// driver's reason when the capture or the instantiation fails (the stream is left usable).
  static CudaGraph capture(int deviceId, const std::function<void()>& launches);
  /// Queues one replay on the launch stream; does not wait.
  void launch() const;

 private:
  struct Handles;
  std::shared_ptr<Handles> handles_;
};

}  // namespace tessel::runtime
