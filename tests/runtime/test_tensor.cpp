#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "FakeDeviceAPI.h"
#include "runtime/CudaDevice.h"
#include "runtime/Tensor.h"
#include "common/ErrorText.h"
#include "support/Error.h"

using namespace tessel;
using namespace tessel::testsupport;
using namespace tessel::runtime;

namespace {


Tensor iota(std::vector<int64_t> shape, Device device = Device::cpu()) {
  Tensor host = Tensor::empty(std::move(shape), DataType::float32());
  float* p = host.dataAs<float>();
  std::iota(p, p + host.numel(), 1.0f);
  return host.to(device);
}

std::vector<float> contents(const Tensor& t) {
  std::vector<float> values(size_t(t.numel()));
  t.copyToHost(values.data(), values.size() * sizeof(float));
  return values;
}

}  // namespace

TEST(Tensor, EmptyHasShapeDtypeAndSize) {
  Tensor t = Tensor::empty({2, 3, 4}, DataType::float32());
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.dtype(), DataType::float32());
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.ndim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 96u);

  Tensor scalar = Tensor::empty({}, DataType::int64());
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 8u);

  Tensor none = Tensor::empty({3, 0}, DataType::int8());
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(none.nbytes(), 0u);
  EXPECT_NE(none.data(), nullptr);

  EXPECT_EQ(Tensor::empty({5}, DataType::boolean()).nbytes(), 5u);
  EXPECT_EQ(Tensor::empty({5}, DataType::float16()).nbytes(), 10u);
}

TEST(Tensor, AllocationsAre64ByteAligned) {
  for (int64_t n : {1, 3, 17, 64, 1000, 4097}) {
    for (DataType d : {DataType::int8(), DataType::float32(), DataType::float64()}) {
      Tensor t = Tensor::empty({n}, d);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u) << n << " " << d.str();
    }
  }
}

TEST(Tensor, RejectsBadShapesAndDtypes) {
  EXPECT_EQ(errorOf([] { Tensor::empty({2, -1}, DataType::float32()); }),
            "cannot create a tensor of shape [2, -1]: dimension 1 is negative");
  EXPECT_EQ(errorOf([] { Tensor::empty({4}, DataType::float32(4)); }),
            "cannot create a tensor of dtype float32x4: vector dtypes (lanes > 1) are not supported");
  EXPECT_THROW(Tensor::empty({4}, DataType::handle()), Error);
  EXPECT_NE(errorOf([] { Tensor::empty({int64_t(1) << 40, int64_t(1) << 40}, DataType::float32()); })
                .find("too many"),
            std::string::npos);
}

TEST(Tensor, UndefinedTensorIsAnError) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(errorOf([&] { t.shape(); }), "use of an undefined tensor");
  EXPECT_THROW(t.data(), Error);
  EXPECT_THROW(t.abi(), Error);
}

TEST(Tensor, CopiesShareStorageAndCloneDoesNot) {
  Tensor a = iota({4});
  Tensor shared = a;
  Tensor copy = a.clone();
  EXPECT_TRUE(shared.sharesStorageWith(a));
  EXPECT_FALSE(copy.sharesStorageWith(a));
  EXPECT_NE(copy.data(), a.data());
  a.dataAs<float>()[0] = 100;
  EXPECT_EQ(shared.dataAs<float>()[0], 100);
  EXPECT_EQ(copy.dataAs<float>()[0], 1);
  EXPECT_EQ(contents(copy), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Tensor, CopyFromAndToHost) {
  Tensor t = Tensor::empty({2, 2}, DataType::int32());
  std::vector<int32_t> in{1, -2, 3, -4}, out(4, 0);
  t.copyFromHost(in.data(), in.size() * sizeof(int32_t));
  t.copyToHost(out.data(), out.size() * sizeof(int32_t));
  EXPECT_EQ(in, out);
  EXPECT_EQ(t.dataAs<int32_t>()[3], -4);
  EXPECT_EQ(errorOf([&] { t.copyFromHost(in.data(), 12); }),
            "copyFromHost into a tensor of shape [2, 2] and dtype int32: expected 16 bytes, got 12");
  EXPECT_THROW(t.copyToHost(out.data(), 20), Error);
}

TEST(Tensor, DataAsChecksTheElementType) {
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::float32()).dataAs<float>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::float32()).dataAs<const float>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::float64()).dataAs<double>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::int8()).dataAs<int8_t>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::uint8()).dataAs<uint8_t>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::int32()).dataAs<int32_t>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::int64()).dataAs<int64_t>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::float16()).dataAs<uint16_t>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::boolean()).dataAs<bool>());
  EXPECT_NO_THROW(Tensor::empty({1}, DataType::boolean()).dataAs<uint8_t>());

  EXPECT_EQ(errorOf([] { Tensor::empty({1}, DataType::float32()).dataAs<int32_t>(); }),
            "cannot access a tensor of dtype float32 as int32_t");
  EXPECT_THROW(Tensor::empty({1}, DataType::float32()).dataAs<double>(), Error);
  EXPECT_THROW(Tensor::empty({1}, DataType::int8()).dataAs<uint8_t>(), Error);
  EXPECT_THROW(Tensor::empty({1}, DataType::uint8()).dataAs<bool>(), Error);
  EXPECT_THROW(Tensor::empty({1}, DataType::float16()).dataAs<float>(), Error);
  EXPECT_THROW(Tensor::empty({1}, DataType::int64()).dataAs<int32_t>(), Error);
}

TEST(Tensor, AbiDescribesTheTensor) {
  TesselTensor abi;
  Tensor keeper;
  {
    Tensor t = Tensor::empty({3, 5}, DataType::int8());
    keeper = t;
    abi = t.abi();
    EXPECT_EQ(abi.data, t.data());
  }
  // The shape array lives in the storage, which `keeper` still holds.
  ASSERT_EQ(abi.ndim, 2);
  EXPECT_EQ(abi.shape[0], 3);
  EXPECT_EQ(abi.shape[1], 5);
  EXPECT_EQ(abi.strides, nullptr);
  EXPECT_EQ(abi.dtype_code, 0);
  EXPECT_EQ(abi.dtype_bits, 8);
  EXPECT_EQ(abi.dtype_lanes, 1);
  EXPECT_EQ(abi.device_type, TESSEL_DEVICE_CPU);
  EXPECT_EQ(abi.device_id, 0);
  EXPECT_EQ(abi.shape, keeper.abi().shape);

  TesselTensor f = Tensor::empty({}, DataType::float16()).abi();
  EXPECT_EQ(f.ndim, 0);
  EXPECT_EQ(f.dtype_code, 2);
  EXPECT_EQ(f.dtype_bits, 16);
  EXPECT_EQ(Tensor::empty({1}, DataType::boolean()).abi().dtype_code, 3);
  EXPECT_EQ(Tensor::empty({1}, DataType::uint8()).abi().dtype_code, 1);
}

TEST(Tensor, MovesBetweenDevicesThroughTheDeviceAPI) {
  auto counters = fakes::registerFakeDevice(DeviceKind::VTA);
  Device vta{DeviceKind::VTA, 0};
  {
    Tensor host = iota({2, 3});
    Tensor onDevice = host.to(vta);
    EXPECT_EQ(onDevice.device(), vta);
    EXPECT_EQ(onDevice.abi().device_type, TESSEL_DEVICE_VTA);
    EXPECT_EQ(counters->allocations, 1);
    EXPECT_EQ(counters->copiesFromHost, 1);
    EXPECT_TRUE(onDevice.to(vta).sharesStorageWith(onDevice));
    EXPECT_TRUE(host.to(Device::cpu()).sharesStorageWith(host));

    Tensor copy = onDevice.clone();
    EXPECT_EQ(copy.device(), vta);
    EXPECT_EQ(counters->allocations, 2);

    host.dataAs<float>()[0] = -1;  // the device copy is independent
    Tensor back = copy.to(Device::cpu());
    EXPECT_EQ(back.device(), Device::cpu());
    EXPECT_EQ(contents(back), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    EXPECT_GE(counters->copiesToHost, 2);

    EXPECT_EQ(errorOf([&] { onDevice.dataAs<float>(); }),
              "cannot access a tensor on vta:0 from the host as float*: copy it to the cpu first");
  }
  EXPECT_EQ(counters->releases.load(), counters->allocations.load());
}

TEST(Tensor, UnavailableDeviceIsAnError) {
  std::string why;
  if (cudaDeviceAvailable(&why)) GTEST_SKIP() << "this machine has a CUDA device";
  expectContains(errorOf([] { Tensor::empty({4}, DataType::float32(), Device::parse("cuda:0")); }),
                 "device 'cuda:0' is not available: no CUDA device: ");
  EXPECT_THROW(iota({4}).to(Device::parse("cuda:1")), Error);
}
