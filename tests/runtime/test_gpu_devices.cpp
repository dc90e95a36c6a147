// The cuda and opencl devices of the runtime: memory round trips on the device (OpenCL on
// PoCL here; CUDA where a GPU is), the limits they report, and module manifests a GPU module
// refuses. Kernels are test_gpu_end_to_end's.
#include <gtest/gtest.h>

#include <numeric>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "runtime/CudaDevice.h"
#include "runtime/GpuModule.h"
#include "runtime/OpenclDevice.h"
#include "runtime/Tensor.h"

using namespace tessel;
using namespace tessel::runtime;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

void roundTrip(const Device& device) {
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), 0.5f);
  auto onDevice = Tensor::empty({10, 100}, DataType::float32(), device);
  EXPECT_EQ(onDevice.device(), device);
  onDevice.copyFromHost(values.data(), values.size() * sizeof(float));
  auto copy = onDevice.clone();  // device to device through the host
  auto back = copy.to(Device::cpu());
  EXPECT_EQ(std::vector<float>(back.dataAs<float>(), back.dataAs<float>() + 1000), values);
  deviceAPI(device).synchronize();
}

}  // namespace

TEST(GpuDevices, OpenclMemoryRoundTrips) {
  TESSEL_REQUIRE_OPENCL();
  roundTrip(Device{DeviceKind::OpenCL, 0});
  expectContains(deviceAPI(Device{DeviceKind::OpenCL, 0}).name(), "opencl (");
}

TEST(GpuDevices, OpenclReportsItsLimits) {
  TESSEL_REQUIRE_OPENCL();
  GpuDeviceInfo info = openclDeviceInfo(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.maxThreadsPerBlock, 1);
  EXPECT_GE(info.maxSharedMemoryPerBlock, 1024);  // OpenCL guarantees 16 KiB for GPUs, PoCL more
  EXPECT_GE(info.maxBlockDimensions[0], 1);
  EXPECT_GE(info.computeUnits, 1);
  expectContains(errorOf([] { openclDeviceInfo(99); }), "no OpenCL device opencl:99: this machine has ");
}

TEST(GpuDevices, CudaMemoryRoundTripsAndLimits) {
  TESSEL_REQUIRE_CUDA();
  roundTrip(Device{DeviceKind::CUDA, 0});
  GpuDeviceInfo info = cudaDeviceInfo(0);
  std::printf("cuda:0 %s %s: %lld threads/block, %lld bytes shared/block, warp %lld, %lld SMs\n", info.name.c_str(),
              info.architecture.c_str(), (long long)info.maxThreadsPerBlock, (long long)info.maxSharedMemoryPerBlock,
              (long long)info.warpSize, (long long)info.computeUnits);
  EXPECT_EQ(info.maxThreadsPerBlock, 1024);
  EXPECT_EQ(info.warpSize, 32);
  expectContains(errorOf([] { deviceAPI(Device{DeviceKind::CUDA, 99}); }), "no CUDA device cuda:99: this machine has ");
}

TEST(GpuDevices, CudaWithoutAGpuSaysWhy) {
  std::string why;
  if (cudaDeviceAvailable(&why)) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
  expectContains(errorOf([] { cudaDeviceInfo(0); }), "no CUDA device: ");
  expectContains(errorOf([] { cudaEventClock(0); }), "no CUDA device: ");
}

TEST(GpuDevices, BadGpuManifestsAreRejectedByName) {
  expectContains(errorOf([] { GpuModule::fromMemory(R"({"device": "cpu", "kernels": [{"name": "k", "args": []}]})", ""); }),
                 "GPU module manifest: device 'cpu' is not a GPU (expected cuda or opencl)");
  expectContains(errorOf([] { GpuModule::fromMemory(R"({"device": "opencl", "kernels": [{"name": "k", "args": []}]})", ""); }),
                 "GPU module manifest, kernel 'k': expected a 'launch' object (a GPU kernel)");
  expectContains(errorOf([] {
                   GpuModule::fromMemory(R"({"device": "opencl", "kernels": [{"name": "k", "args": [],
                                             "launch": {"grid": [1, 1], "block": [1, 1, 1]}}]})", "");
                 }),
                 "kernel 'k', launch 'grid': expected 3 dimensions, got 2");
  expectContains(errorOf([] { GpuModule::load("/nonexistent/module"); }), "/nonexistent/module/manifest.json");
}
