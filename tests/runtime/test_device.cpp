#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "runtime/CudaDevice.h"
#include "runtime/Device.h"
#include "common/ErrorText.h"
#include "support/Error.h"

using namespace tessel;
using namespace tessel::testsupport;
using namespace tessel::runtime;

namespace {


class CountingCpuAPI final : public DeviceAPI {
 public:
  explicit CountingCpuAPI(int id) : id(id) {}
  void* allocate(size_t, size_t) override { return nullptr; }
  void release(void*) override {}
  void copyFromHost(void*, const void*, size_t) override {}
  void copyToHost(void*, const void*, size_t) override {}
  void synchronize() override {}
  std::string name() const override { return "counting:" + std::to_string(id); }
  int id;
};

}  // namespace

TEST(Device, KindValuesMatchTheKernelAbi) {
  EXPECT_EQ(int32_t(DeviceKind::CPU), TESSEL_DEVICE_CPU);
  EXPECT_EQ(int32_t(DeviceKind::CUDA), TESSEL_DEVICE_CUDA);
  EXPECT_EQ(int32_t(DeviceKind::OpenCL), TESSEL_DEVICE_OPENCL);
  EXPECT_EQ(int32_t(DeviceKind::VTA), TESSEL_DEVICE_VTA);
}

TEST(Device, ParsesAndPrints) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cpu:0"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda:1"), (Device{DeviceKind::CUDA, 1}));
  EXPECT_EQ(Device::parse("opencl"), (Device{DeviceKind::OpenCL, 0}));
  EXPECT_EQ(Device::parse("vta"), (Device{DeviceKind::VTA, 0}));
  EXPECT_EQ(Device::parse("CUDA:3"), (Device{DeviceKind::CUDA, 3}));
  EXPECT_EQ(Device::cpu().str(), "cpu:0");
  EXPECT_EQ((Device{DeviceKind::CUDA, 1}).str(), "cuda:1");
  EXPECT_EQ((Device{DeviceKind::OpenCL, 2}).str(), "opencl:2");
  for (auto d : {Device::cpu(), Device{DeviceKind::CUDA, 7}, Device{DeviceKind::VTA, 0}})
    EXPECT_EQ(Device::parse(d.str()), d);
  EXPECT_NE(Device::parse("cuda:0"), Device::parse("cuda:1"));
  EXPECT_NE(Device::parse("cuda:0"), Device::parse("opencl:0"));
}

TEST(Device, RejectsBadText) {
  for (const char* text : {"gpu", "", "cuda:", "cuda:x", "cuda:-1", "cuda:1:2", ":0", "cpu0", "cuda:99999999999"}) {
    std::string message = errorOf([&] { Device::parse(text); });
    EXPECT_NE(message.find("invalid device '" + std::string(text) + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("cpu, cuda, opencl or vta"), std::string::npos) << message;
  }
  EXPECT_NE(errorOf([] { Device::parse("gpu:0"); }).find("unknown device kind 'gpu'"), std::string::npos);
}

TEST(Device, CpuIsBuiltInAndAligned) {
  DeviceAPI& cpu = deviceAPI(Device::cpu());
  EXPECT_EQ(cpu.name(), "cpu");
  EXPECT_EQ(&cpu, &deviceAPI(Device::parse("cpu")));
  EXPECT_TRUE(hasDeviceAPI(DeviceKind::CPU));
  for (size_t bytes : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(1000), size_t(1) << 20}) {
    void* p = cpu.allocate(bytes, kCpuAlignment);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::vector<unsigned char> src(bytes, 0xab), dst(bytes, 0);
    cpu.copyFromHost(p, src.data(), bytes);
    cpu.copyToHost(dst.data(), p, bytes);
    EXPECT_EQ(src, dst);
    cpu.release(p);
  }
  cpu.synchronize();
  EXPECT_THROW(cpu.allocate(8, 48), Error);
}

TEST(Device, GpuKindsWithoutADeviceAreAClearError) {
  // The runtime serves cuda and opencl itself; without the hardware the error says why.
  EXPECT_TRUE(hasDeviceAPI(DeviceKind::CUDA));
  EXPECT_TRUE(hasDeviceAPI(DeviceKind::OpenCL));
  std::string why;
  if (cudaDeviceAvailable(&why)) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_EQ(errorOf([] { deviceAPI(Device::parse("cuda:0")); }), "device 'cuda:0' is not available: " + why);
  EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
}

TEST(Device, FactoryRunsOncePerDeviceOnFirstUse) {
  auto made = std::make_shared<std::atomic<int>>(0);  // shared: the factory outlives the test
  registerDeviceAPI(DeviceKind::OpenCL, [made](int id) -> std::shared_ptr<DeviceAPI> {
    ++*made;
    return std::make_shared<CountingCpuAPI>(id);
  });
  EXPECT_EQ(*made, 0);
  EXPECT_EQ(deviceAPI(Device{DeviceKind::OpenCL, 0}).name(), "counting:0");
  EXPECT_EQ(deviceAPI(Device{DeviceKind::OpenCL, 0}).name(), "counting:0");
  EXPECT_EQ(*made, 1);
  EXPECT_EQ(deviceAPI(Device{DeviceKind::OpenCL, 2}).name(), "counting:2");
  EXPECT_EQ(*made, 2);

  // Replacing the factory: old references stay valid, new requests use the new factory.
  DeviceAPI& old = deviceAPI(Device{DeviceKind::OpenCL, 0});
  registerDeviceAPI(DeviceKind::OpenCL, []() -> std::shared_ptr<DeviceAPI> { return std::make_shared<CountingCpuAPI>(42); });
  EXPECT_EQ(old.name(), "counting:0");
  EXPECT_EQ(deviceAPI(Device{DeviceKind::OpenCL, 0}).name(), "counting:42");
}

TEST(Device, FactoryFailuresNameTheDevice) {
  registerDeviceAPI(DeviceKind::OpenCL, []() -> std::shared_ptr<DeviceAPI> { tessel::fail("no OpenCL platform found"); });
  EXPECT_EQ(errorOf([] { deviceAPI(Device{DeviceKind::OpenCL, 1}); }),
            "device 'opencl:1' is not available: no OpenCL platform found");
  registerDeviceAPI(DeviceKind::OpenCL, []() -> std::shared_ptr<DeviceAPI> { return nullptr; });
  EXPECT_NE(errorOf([] { deviceAPI(Device{DeviceKind::OpenCL, 0}); }).find("device 'opencl:0' is not available"),
            std::string::npos);
}

TEST(Device, ConcurrentFirstUseCreatesOneInstance) {
  auto made = std::make_shared<std::atomic<int>>(0);
  registerDeviceAPI(DeviceKind::OpenCL, [made](int id) -> std::shared_ptr<DeviceAPI> {
    ++*made;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return std::make_shared<CountingCpuAPI>(id);
  });
  std::vector<std::thread> threads;
  std::vector<DeviceAPI*> seen(8, nullptr);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t, &seen] { seen[t] = &deviceAPI(Device{DeviceKind::OpenCL, 5}); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(*made, 1);
  for (DeviceAPI* p : seen) EXPECT_EQ(p, seen[0]);
}
