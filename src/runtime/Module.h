/// Loading compiled kernels: a Module is one shared library produced by codegen, opened with
/// dlopen, that describes itself through its manifest (the `tessel_module_manifest` symbol of
/// KernelAbi.h). A Kernel is one entry point of it, callable with Tensors (checked against the
/// manifest) or with prebuilt ABI arrays (unchecked, for timing loops).
///
/// Manifest JSON, as returned by tessel_module_manifest():
///   {"device": "cpu",                      // optional, default "cpu"; "cuda" = any CUDA device,
///                                          //   "cuda:1" = that one; a kernel may override it
///    "kernels": [{"name": "matmul",        // also the exported symbol unless "symbol" is given
///                 "args": [{"name": "A", "dtype": "float32", "shape": [64, 32]}, ...]}]}
/// A shape extent of -1 accepts any extent. Every kernel has the TesselKernel signature.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Tensor.h"
#include "support/DataType.h"
#include "support/KernelAbi.h"

namespace tessel::runtime {

/// What the manifest says about one kernel argument.
struct ArgSpec {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;  ///< -1 where any extent is accepted
};

/// What the manifest says about one kernel.
struct KernelSpec {
  std::string name;
  std::string symbol;          ///< the exported function
  std::vector<ArgSpec> args;
  int numOutputs = -1;         ///< the last numOutputs args are written; -1: the manifest does not say
  Device device;               ///< where its arguments must live
  bool anyDeviceId = true;     ///< true when the manifest named only the kind ("cuda")
};

/// Parses a manifest (the JSON above); throws Error naming the kernel and argument at fault.
/// GPU modules (GpuModule.h) share the format and add a launch per kernel.
std::vector<KernelSpec> parseKernelManifest(const std::string& text);

/// Throws Error unless the arguments match the spec in count, device, dtype, rank and shape,
/// e.g. "kernel 'matmul', argument 'B' (2 of 3): expected shape [64, 32], got [64, 16]".
void checkKernelArguments(const KernelSpec& spec, const std::vector<Tensor>& args);

namespace detail {
struct LoadedLibrary;
}

/// One kernel of a loaded module. Keeps the library loaded while it (or a closure from bind)
/// lives, even after the Module is gone. Cheap to copy.
class Kernel {
 public:
  Kernel() = default;
  bool defined() const { return library_ != nullptr; }
  const std::string& name() const;
  const std::vector<ArgSpec>& argSpecs() const;
  const KernelSpec& spec() const;

  /// Throws Error unless the arguments match the manifest in count, device, dtype, rank and
  /// shape, e.g. "kernel 'matmul', argument 'B' (2 of 3): expected shape [64, 32], got [64, 16]".
  void checkArguments(const std::vector<Tensor>& args) const;
  /// Checks the arguments, then runs the kernel; a non-zero return becomes an Error carrying
  /// the kernel's own message.
  void call(const std::vector<Tensor>& args) const;
  /// Runs the kernel on prebuilt ABI arguments without any check (the caller vouches for them);
  /// a non-zero return still throws.
  void callPacked(const TesselTensor* args, int numArgs) const;
  /// Checks the arguments once and returns a closure that runs the kernel on them (the tensors
  /// are kept alive by the closure). Meant for timing loops.
  std::function<void()> bind(const std::vector<Tensor>& args) const;

 private:
  friend class Module;
  Kernel(std::shared_ptr<const detail::LoadedLibrary> library, size_t index);
  std::shared_ptr<const detail::LoadedLibrary> library_;
  size_t index_ = 0;
  TesselKernel function_ = nullptr;
};

/// A loaded shared library of kernels. Cheap to copy (copies share the library handle).
class Module {
 public:
  /// dlopens the library (RTLD_NOW | RTLD_LOCAL) and reads its manifest. A path without '/'
  /// names a file in the working directory (no library search path is used). Throws Error
  /// naming the path for a missing file, a dlopen failure (with dlerror's message), a library
  /// that is "not a tessel module" (no manifest symbol), a malformed manifest, or a kernel the
  /// manifest lists but the library does not export.
  static Module load(const std::string& sharedLibraryPath);

  const std::string& path() const;
  /// The kernel names, in manifest order.
  std::vector<std::string> kernelNames() const;
  bool hasKernel(const std::string& name) const;
  /// Throws Error listing the available kernels when the name is unknown.
  Kernel kernel(const std::string& name) const;
  /// The manifest's JSON text as the library returned it.
  const std::string& manifestText() const;

 private:
  std::shared_ptr<const detail::LoadedLibrary> library_;
};

}  // namespace tessel::runtime
