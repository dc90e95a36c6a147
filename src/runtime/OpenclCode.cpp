#include <fmt/format.h>

#include <mutex>
#include <optional>

#include "runtime/GpuCode.h"
#include "runtime/OpenclDriver.h"
#include "support/BinaryCache.h"
#include "support/Error.h"

namespace tessel::runtime::detail {

namespace {

using namespace opencl;

class OpenclCode : public LoadedGpuCode {
 public:
  OpenclCode(int deviceId, const std::string& source, const std::vector<std::string>& kernels, bool cacheBinary)
      : device_(deviceContext(deviceId)) {
    // The binary the driver made last time, keyed by everything that could change it: the
    // source, the build options, and the device's name, OpenCL version and driver version.
    // A driver with its own cache of builds is left to it unless $TESSEL_OPENCL_CACHE names a
    // directory: asked for a program's binary, PoCL 3.1 compiles every kernel again for any
    // work-group size (resnet-18 with Winograd layers on a 2-core Zen 3: 45 s to build and keep
    // the binary, 19 s to build only), and its own cache already makes the next build of the
    // same source cost a few seconds.
    std::string directory =
        cacheBinary ? binaryCacheDirectory("TESSEL_OPENCL_CACHE", "opencl",
                                           device_.cachesBuildsItself ? DefaultCacheLocation::kSkip : DefaultCacheLocation::kUse)
                    : "";
    std::string cached =
        directory.empty()
            ? ""
            : binaryCachePath(directory, {source, kBuildOptions, device_.name, device_.version, device_.driverVersion}, ".bin");
    if (!cached.empty())
      if (auto binary = readCachedBinary(cached)) program_ = buildFromBinary(*binary);
    if (!program_) {
      buildFromSource(deviceId, source);
      if (!cached.empty())
        if (auto binary = programBinary()) storeCachedBinary(cached, *binary);
    }
    const Api& a = api();
    cl_int err = 0;
    for (auto& name : kernels) {
      cl_kernel k = a.clCreateKernel(program_, name.c_str(), &err);
      if (err != 0) {
        release();
        a.check(err, fmt::format("creation of kernel '{}'", name));
      }
      kernels_.push_back(k);
    }
  }
  ~OpenclCode() override { release(); }


  void launch(size_t index, const std::vector<void*>& buffers, const GpuLaunchDims& dims) const override {
    const Api& a = api();
    // Arguments are state of the cl_kernel: set and enqueue under one lock.
    std::lock_guard lock(mutex_);
    cl_kernel k = kernels_.at(index);
    for (size_t i = 0; i < buffers.size(); ++i) {
      cl_mem m = static_cast<cl_mem>(buffers[i]);
      a.check(a.clSetKernelArg(k, cl_uint(i), sizeof(cl_mem), &m), fmt::format("argument {} of a kernel", i));
    }
    size_t global[3], local[3];
    for (size_t d = 0; d < 3; ++d) {
      local[d] = size_t(dims.block[d]);
      global[d] = size_t(dims.grid[d] * dims.block[d]);
    }
    a.check(a.clEnqueueNDRangeKernel(device_.queue, k, 3, nullptr, global, local, 0, nullptr, nullptr), "kernel launch");
  }

 private:
  static constexpr const char* kBuildOptions = "";

  /// The program of a cached binary, built; null when the driver refuses it (another driver
  /// version wrote it, the file is damaged): the caller then builds from source.
  cl_program buildFromBinary(const std::string& binary) {
    const Api& a = api();
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    size_t size = binary.size();
    cl_int status = 0, err = 0;
    cl_program program = a.clCreateProgramWithBinary(device_.context, 1, &device_.device, &size, &bytes, &status, &err);
    if (err != 0 || status != 0 || !program) {
      if (program) a.clReleaseProgram(program);
      return nullptr;
    }
    if (a.clBuildProgram(program, 1, &device_.device, kBuildOptions, nullptr, nullptr) != 0) {
      a.clReleaseProgram(program);
      return nullptr;
    }
    return program;
  }

  void buildFromSource(int deviceId, const std::string& source) {
    const Api& a = api();
    const char* text = source.c_str();
    size_t length = source.size();
    cl_int err = 0;
    program_ = a.clCreateProgramWithSource(device_.context, 1, &text, &length, &err);
    a.check(err, "program creation");
    cl_int built = a.clBuildProgram(program_, 1, &device_.device, kBuildOptions, nullptr, nullptr);
    if (built != 0) {
      size_t size = 0;
      a.clGetProgramBuildInfo(program_, device_.device, kProgramBuildLog, 0, nullptr, &size);
      std::string log(size, '\0');
      a.clGetProgramBuildInfo(program_, device_.device, kProgramBuildLog, size, log.data(), nullptr);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
      a.clReleaseProgram(program_);
      program_ = nullptr;
      throw DeviceCompileError(
          fmt::format("OpenCL could not build the kernels on opencl:{} ({}), error {}:\n{}", deviceId, device_.name, built, log));
    }
  }

  /// The binary the driver made of the built program (one device), if it gives one.
  std::optional<std::string> programBinary() const {
    const Api& a = api();
    size_t size = 0;
    if (a.clGetProgramInfo(program_, kProgramBinarySizes, sizeof(size), &size, nullptr) != 0 || size == 0) return std::nullopt;
    std::string binary(size, '\0');
    unsigned char* where = reinterpret_cast<unsigned char*>(binary.data());
    if (a.clGetProgramInfo(program_, kProgramBinaries, sizeof(where), &where, nullptr) != 0) return std::nullopt;
    return binary;
  }

  void release() {
    for (auto k : kernels_) api().clReleaseKernel(k);
    kernels_.clear();
    if (program_) api().clReleaseProgram(program_);
    program_ = nullptr;
  }

  const DeviceContext& device_;
  cl_program program_ = nullptr;
  std::vector<cl_kernel> kernels_;
  mutable std::mutex mutex_;
};

}  // namespace

std::shared_ptr<const LoadedGpuCode> loadOpenclCode(int deviceId, const std::string& source, const std::vector<std::string>& kernels,
                                                    bool cacheBinary) {
  return std::make_shared<OpenclCode>(deviceId, source, kernels, cacheBinary);
}

}  // namespace tessel::runtime::detail
