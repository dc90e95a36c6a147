/// The graph executor: runs a compiled network with the runtime alone. A deployable module is
/// one directory holding
///   kernels.so    the fused functions (codegen's shared library, see Module.h)
///   graph.json    the execution plan (below)
///   params.bin    the weights (Params.h)
/// graph.json:
///   {"format": "tessel.graph_executor", "version": 1,
///    "storages": [bytes, ...],                          // planned buffers, reused across tensors
///    "tensors": [{"name": "data", "dtype": "float32", "shape": [1, 3, 224, 224],
///                 "storage": 0}                         // an activation in a planned buffer
///              | {..., "param": "conv1_weight"}],       // a weight from params.bin
///    "inputs": [tensor ids], "outputs": [tensor ids],
///    "calls": [{"kernel": "fused_conv2d_0", "args": [tensor ids]}]}  // in execution order
/// A call's arguments are the kernel's: inputs, then its outputs (the manifest's "outputs" says
/// how many; one when it does not). Loading checks that every value is defined before it is
/// used: a call reads graph inputs, parameters or values earlier calls wrote and that no later
/// write has replaced in their storage.
/// Every buffer is allocated once, when the executor is created, so running it touches no new
/// memory; argument descriptors are prebuilt so one call costs one indirect function call.
///
/// A GPU module (graph.json with "device": "cuda" | "opencl", the kernels a GpuModule:
/// manifest.json with kernels.cubin or kernels.cl) runs on a device of that kind: the planned
/// storages are device buffers, the parameters are uploaded once when it loads, setInput and
/// getOutput copy, and run() launches the calls in order on the device's one stream / queue
/// and waits for them. On CUDA the first run captures the launches into a CUDA graph
/// (CudaGraph.h) and every run replays it (GraphExecutorOptions::cudaGraph turns it off).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/CudaGraph.h"
#include "runtime/GpuModule.h"
#include "runtime/Module.h"
#include "runtime/Params.h"
#include "runtime/TimeEvaluator.h"

namespace tessel::runtime {

/// The plan's file in a module directory (every kind of module has one).
inline constexpr const char* kGraphPlanFile = "graph.json";

/// The bytes of a plan's tensor of `dtype` and `shape`, checked as the runtime loads a plan and
/// as `compile` makes one, so that compile refuses what the runtime would: an extent past 2^32,
/// or more bytes than one activation buffer may have (budgets::kActivationBufferBytes), is an
/// Error that starts with `where`.
int64_t planTensorBytes(const std::string& where, DataType dtype, const std::vector<int64_t>& shape);

/// An Error starting with `where` when a planned buffer of `bytes` is more than one activation
/// buffer may have.
void checkPlanBufferBytes(const std::string& where, int64_t bytes);

struct GraphExecutorOptions {
  Device device = Device::cpu();  ///< where to run; must be of the kind the module was built for
  bool cudaGraph = true;          ///< on CUDA: replay the calls as one CUDA graph
};

class GraphExecutor {
 public:
  /// Loads a module directory. Errors name the directory and the offending file or entry, and
  /// a device of another kind than the module's ("built for cuda, not opencl").
  static GraphExecutor load(const std::string& directory, const GraphExecutorOptions& options = {});
  /// A CPU executor of `kernels` from a plan given as its JSON text (what graph.json holds) and
  /// the parameters; errors as load's, naming `origin`. For programs that hold the plan
  /// themselves (the plan fuzzer feeds it arbitrary text).
  static GraphExecutor fromPlanText(Module kernels, std::string_view planText, const NamedTensors& params, const std::string& origin);

  Device device() const { return device_; }
  /// Whether run() replays a CUDA graph (CUDA, the option on, and no call replaced by a host function).
  bool usesCudaGraph() const;

  int numInputs() const { return int(inputs_.size()); }
  int numOutputs() const { return int(outputs_.size()); }
  const std::string& inputName(int index) const;
  std::vector<int64_t> inputShape(int index) const;
  DataType inputDtype(int index) const;
  std::vector<int64_t> outputShape(int index) const;

  /// Copies `value` into the named input; Error on an unknown name or a dtype/shape mismatch.
  void setInput(const std::string& name, const Tensor& value);
  void setInput(int index, const Tensor& value);
  /// The same from host memory that is not a Tensor (a numpy array of the Python package):
  /// `data` holds a compact array of `dtype` and `shape`, copied straight into the input's buffer.
  void setInputFromHost(int index, DataType dtype, const std::vector<int64_t>& shape, const void* data);
  /// Every input set to zeros of its shape and dtype (timing a module needs no real data).
  void setZeroInputs();
  /// A host function that takes the place of a call's kernel: it gets the call's argument
  /// descriptors (its inputs, then its outputs, viewing the executor's buffers) and must write
  /// the outputs. How an accelerator's programs stand in for fused functions compiled for the
  /// CPU (a VTA module runs its packed convolutions on the device this way), without any
  /// compiler in the runtime.
  using CallHandler = std::function<void(const TesselTensor* args, int count)>;
  /// Runs `handler` instead of call `index`'s kernel (in execution order, from 0). Error for an
  /// index past the calls.
  void replaceCall(size_t index, CallHandler handler);

  /// Runs every call in order (on a GPU: launches them and waits); a kernel's error becomes an
  /// Error naming the call.
  void run();
  /// A copy of output `index` after run().
  Tensor getOutput(int index) const;

  /// Times run() (TVM's `benchmark`): repeat x number calls with min_repeat_ms calibration.
  TimingResult benchmark(const TimeEvaluatorOptions& options);

  /// Per call, in execution order: the kernel and its median seconds over `repeat` runs of the
  /// whole graph (each call timed on its own, as TVM's debug executor does). On a GPU each
  /// sample is kGpuProfileBurst launches of the call in a row and one synchronization, divided:
  /// a synchronization per launch would add its round trip (about 10 us on an H200 host, more
  /// than most of a transformer's kernels take) to every call.
  struct CallProfile {
    std::string kernel;
    double seconds = 0;
  };
  std::vector<CallProfile> profile(int repeat = 5);
  static constexpr int kGpuProfileBurst = 20;

  /// Bytes of the planned activation buffers, and what one buffer per tensor would take.
  size_t plannedBytes() const;
  size_t unplannedBytes() const { return unplannedBytes_; }
  size_t numCalls() const { return calls_.size(); }

 private:
  struct TensorEntry {
    std::string name;
    DataType dtype;
    std::vector<int64_t> shape;
    Tensor storage;  ///< the buffer holding it (a planned storage or the parameter itself)
  };
  struct Call {
    std::string name;     ///< the kernel's
    Kernel kernel;        ///< a CPU module's kernel, or
    GpuKernel gpuKernel;  ///< a GPU module's (gpu is true)
    bool gpu = false;
    std::vector<TesselTensor> args;
    CallHandler handler;  ///< when set, runs instead of the kernel
    void invoke() const;
  };
  /// The parsed graph.json, defined where it is read (GraphExecutor.cpp): the JSON library stays
  /// out of this header, which a deployed program includes from the installed runtime.
  struct Plan;
  /// From parts already in memory (load's); `origin` names them in errors.
  GraphExecutor(Module kernels, const Plan& plan, const NamedTensors& params, const std::string& origin);
  /// A GPU module's, on the module's device.
  GraphExecutor(GpuModule kernels, const Plan& plan, const NamedTensors& params, const std::string& origin, bool cudaGraph);
  TesselTensor descriptor(const TensorEntry& t) const;
  /// Reads and validates the plan: every number in range, every value defined before it is
  /// read and not overwritten in its storage until its last read.
  void loadPlan(const Plan& plan, const NamedTensors& params);
  /// The same, its errors prefixed with `origin` (a malformed plan's JSON error among them).
  void loadPlan(const Plan& plan, const NamedTensors& params, const std::string& origin);
  /// Runs the calls in order (a GPU's launches are queued, not waited for).
  void invokeCalls();

  Device device_ = Device::cpu();
  std::vector<Tensor> storages_;
  std::vector<TensorEntry> tensors_;
  std::vector<int> inputs_, outputs_;
  std::vector<Call> calls_;
  Module module_;
  std::optional<GpuModule> gpuModule_;
  bool cudaGraphWanted_ = false;
  std::optional<CudaGraph> cudaGraph_;  ///< captured at the first run
  size_t unplannedBytes_ = 0;
};

}  // namespace tessel::runtime
