// The cuda and opencl devices of the runtime: memory round trips on the device (OpenCL on
// PoCL here; CUDA where a GPU is), the limits they report, and module manifests a GPU module
// refuses. Kernels are test_gpu_end_to_end's.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "common/ScopedEnv.h"
#include "runtime/CudaDevice.h"
#include "runtime/GpuModule.h"
#include "runtime/OpenclDevice.h"
#include "runtime/Tensor.h"
#include "support/Files.h"
#include "support/TempDir.h"

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

// Caught on an H200 host whose environment names its drivers "libpocl.so.2:libnvidia-opencl.so.1":
// Ubuntu 24.04's ICD loader cut the variable at its colons in place, so every process started
// after OpenCL was loaded (a measurement worker, a device server, `tessel query`) saw PoCL's
// CPU as opencl:0. The loader runs in a fresh process here (a death test re-executes the
// program), the list set before it loads.
TEST(GpuDevices, LoadingOpenclLeavesTheDriverListForTheProgramsStartedLater) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char* given = std::getenv("OCL_ICD_FILENAMES");
  const std::string drivers = given && std::string(given).find(':') != std::string::npos
                                  ? std::string(given)
                                  : std::string("libpocl.so.2:libtessel-no-such-opencl-driver.so");
  EXPECT_EXIT(
      {
        setenv("OCL_ICD_FILENAMES", drivers.c_str(), 1);
        openclDeviceAvailable(nullptr);
        const char* after = std::getenv("OCL_ICD_FILENAMES");
        std::fprintf(stderr, "OCL_ICD_FILENAMES after loading: %s\n", after ? after : "(unset)");
        std::exit(after && drivers == after ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
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

namespace {

/// A one-kernel OpenCL module writing x[i] = 2 * i + `offset` (the offset makes another source),
/// saved in `directory` and loaded from there (as a deployed module is).
GpuModule doublingModule(int offset, const std::string& directory) {
  std::string manifest = R"({"device": "opencl", "kernels": [{"name": "twice", "outputs": 1,
      "args": [{"name": "x", "dtype": "float32", "shape": [64]}],
      "launch": {"grid": [2, 1, 1], "block": [32, 1, 1], "shared_bytes": 0}}]})";
  std::string source = "__kernel void twice(__global float* restrict x) { int i = get_global_id(0); x[i] = 2.0f * i + " +
                       std::to_string(offset) + ".0f; }\n";
  std::filesystem::create_directories(directory);
  writeFile(directory + "/" + kGpuManifestFile, manifest);
  writeFile(directory + "/" + kOpenclCodeFile, source);
  return GpuModule::load(directory);
}

/// Runs it and checks what it wrote.
void expectDoubles(const GpuModule& module, int offset) {
  Device gpu{DeviceKind::OpenCL, 0};
  auto x = Tensor::empty({64}, DataType::float32(), gpu);
  module.kernel("twice").call({x});
  auto back = x.to(Device::cpu());
  for (int i = 0; i < 64; ++i) ASSERT_EQ(back.dataAs<float>()[i], 2.0f * i + offset) << i;
}

std::vector<std::filesystem::path> cachedFiles(const std::string& directory) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::exists(directory))
    for (const auto& entry : std::filesystem::directory_iterator(directory)) files.push_back(entry.path());
  return files;
}

}  // namespace

TEST(GpuDevices, OpenclProgramBinariesAreCachedAndADamagedOneIsRebuilt) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir("tessel-opencl-cache");
  std::string cache = dir.path() + "/cache", module = dir.path() + "/module";
  ::setenv("TESSEL_OPENCL_CACHE", cache.c_str(), 1);
  // The first load builds from source and keeps the driver's binary.
  expectDoubles(doublingModule(1, module), 1);
  auto files = cachedFiles(cache);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".bin");
  auto inode = [](const std::filesystem::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_ino;
  };
  auto first = inode(files[0]);
  // The second load takes the binary: the file is not written again (a write renames a new one
  // into place).
  expectDoubles(doublingModule(1, module), 1);
  EXPECT_EQ(inode(files[0]), first);
  // Another source is another entry.
  expectDoubles(doublingModule(3, module), 3);
  EXPECT_EQ(cachedFiles(cache).size(), 2u);
  // A damaged binary is refused by the driver: the kernels are built from source again and the
  // entry replaced.
  writeFile(files[0].string(), "not a program binary");
  expectDoubles(doublingModule(1, module), 1);
  EXPECT_NE(readFile(files[0].string()), "not a program binary");
  // "off": nothing is written; nor is anything for a module from memory (a tuning candidate).
  ::setenv("TESSEL_OPENCL_CACHE", "off", 1);
  expectDoubles(doublingModule(5, module), 5);
  EXPECT_EQ(cachedFiles(cache).size(), 2u);
  ::setenv("TESSEL_OPENCL_CACHE", cache.c_str(), 1);
  expectDoubles(GpuModule::fromMemory(readFile(module + "/" + kGpuManifestFile), readFile(module + "/" + kOpenclCodeFile)), 5);
  EXPECT_EQ(cachedFiles(cache).size(), 2u);
  ::unsetenv("TESSEL_OPENCL_CACHE");
}

// Asked for a program's binary, PoCL compiles every kernel a second time (for any work-group
// size): the OpenCL tests took twice as long. PoCL keeps its own cache of builds, so tessel
// keeps none there unless $TESSEL_OPENCL_CACHE names a directory (the test above); other drivers
// get the default directory.
TEST(GpuDevices, OpenclBinariesGoToTheDefaultCacheOnlyOnDriversWithoutTheirOwn) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir("tessel-opencl-default-cache");
  testsupport::ScopedEnv noOwnCache("TESSEL_OPENCL_CACHE", std::nullopt), cacheHome("XDG_CACHE_HOME", dir.path());
  expectDoubles(doublingModule(7, dir.path() + "/module"), 7);
  bool pocl = openclDeviceInfo(0).architecture.find(" PoCL ") != std::string::npos;
  const char* poclCache = std::getenv("POCL_KERNEL_CACHE");
  bool poclCaches = pocl && !(poclCache && std::string(poclCache) == "0");
  EXPECT_EQ(cachedFiles(dir.path() + "/tessel/opencl").size(), poclCaches ? 0u : 1u) << openclDeviceInfo(0).architecture;
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
