#include "runtime/Tensor.h"

#include <limits>
#include <vector>

#include <fmt/ranges.h>

#include "support/Error.h"

namespace tessel::runtime {

struct Tensor::Storage {
  std::vector<int64_t> shape;
  DataType dtype;
  Device device;
  int64_t numel = 1;
  size_t nbytes = 0;
  std::shared_ptr<DeviceAPI> api;
  void* data = nullptr;

  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (api && data) api->release(data);
  }
};

std::string formatShape(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

Tensor Tensor::empty(std::vector<int64_t> shape, DataType dtype, Device device) {
  TESSEL_CHECK(dtype.isScalar(), "cannot create a tensor of dtype {}: vector dtypes (lanes > 1) are not supported",
               dtype.str());
  TESSEL_CHECK(dtype.code != DataType::Code::Handle, "cannot create a tensor of dtype handle");
  bool hasZero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    TESSEL_CHECK(shape[i] >= 0, "cannot create a tensor of shape {}: dimension {} is negative", formatShape(shape), i);
    hasZero = hasZero || shape[i] == 0;
  }
  int64_t numel = hasZero ? 0 : 1;
  for (size_t i = 0; i < shape.size() && !hasZero; ++i) {
    if (numel > std::numeric_limits<int64_t>::max() / shape[i])
      fail("cannot create a tensor of shape {}: too many elements", formatShape(shape));
    numel *= shape[i];
  }
  int64_t elementBytes = dtype.storageBytes();
  if (numel > std::numeric_limits<int64_t>::max() / elementBytes)
    fail("cannot create a tensor of shape {} and dtype {}: too many bytes", formatShape(shape), dtype.str());
  auto storage = std::make_shared<Storage>();
  storage->shape = std::move(shape);
  storage->dtype = dtype;
  storage->device = device;
  storage->numel = numel;
  storage->nbytes = size_t(numel * elementBytes);
  storage->api = sharedDeviceAPI(device);
  storage->data = storage->api->allocate(storage->nbytes, kCpuAlignment);
  Tensor tensor;
  tensor.storage_ = std::move(storage);
  return tensor;
}

const Tensor::Storage& Tensor::storage() const {
  TESSEL_CHECK(storage_ != nullptr, "use of an undefined tensor");
  return *storage_;
}

const std::vector<int64_t>& Tensor::shape() const { return storage().shape; }
DataType Tensor::dtype() const { return storage().dtype; }
Device Tensor::device() const { return storage().device; }
int64_t Tensor::numel() const { return storage().numel; }
size_t Tensor::nbytes() const { return storage().nbytes; }
void* Tensor::data() const { return storage().data; }

void Tensor::checkElementAccess(bool typeMatches, const char* typeName) const {
  const Storage& s = storage();
  TESSEL_CHECK(typeMatches, "cannot access a tensor of dtype {} as {}", s.dtype.str(), typeName);
  TESSEL_CHECK(s.device.kind == DeviceKind::CPU,
               "cannot access a tensor on {} from the host as {}*: copy it to the cpu first", s.device.str(),
               typeName);
}

void Tensor::copyFromHost(const void* source, size_t bytes) {
  const Storage& s = storage();
  TESSEL_CHECK(bytes == s.nbytes, "copyFromHost into a tensor of shape {} and dtype {}: expected {} bytes, got {}",
               formatShape(s.shape), s.dtype.str(), s.nbytes, bytes);
  if (bytes > 0) s.api->copyFromHost(s.data, source, bytes);
}

void Tensor::copyToHost(void* destination, size_t bytes) const {
  const Storage& s = storage();
  TESSEL_CHECK(bytes == s.nbytes, "copyToHost from a tensor of shape {} and dtype {}: expected {} bytes, got {}",
               formatShape(s.shape), s.dtype.str(), s.nbytes, bytes);
  if (bytes > 0) s.api->copyToHost(destination, s.data, bytes);
}

Tensor Tensor::to(Device device) const {
  const Storage& s = storage();
  if (device == s.device) return *this;
  Tensor result = empty(s.shape, s.dtype, device);
  if (s.nbytes == 0) return result;
  if (s.device.kind == DeviceKind::CPU) {
    result.copyFromHost(s.data, s.nbytes);
  } else if (device.kind == DeviceKind::CPU) {
    copyToHost(result.data(), s.nbytes);
  } else {
    // Between two non-host devices: through a host staging buffer.
    std::vector<unsigned char> staging(s.nbytes);
    copyToHost(staging.data(), s.nbytes);
    result.copyFromHost(staging.data(), s.nbytes);
  }
  return result;
}

Tensor Tensor::clone() const {
  const Storage& s = storage();
  Tensor result = empty(s.shape, s.dtype, s.device);
  if (s.nbytes == 0) return result;
  if (s.device.kind == DeviceKind::CPU) {
    result.copyFromHost(s.data, s.nbytes);
  } else {
    std::vector<unsigned char> staging(s.nbytes);
    copyToHost(staging.data(), s.nbytes);
    result.copyFromHost(staging.data(), s.nbytes);
  }
  return result;
}

TesselTensor Tensor::abi() const {
  const Storage& s = storage();
  TesselTensor t{};
  t.data = s.data;
  t.shape = s.shape.data();
  t.strides = nullptr;
  t.ndim = int32_t(s.shape.size());
  t.dtype_code = uint8_t(s.dtype.code);
  t.dtype_bits = s.dtype.bits;
  t.dtype_lanes = s.dtype.lanes;
  t.device_type = static_cast<int32_t>(s.device.kind);
  t.device_id = s.device.id;
  return t;
}

NonFiniteCount countNonFinite(const Tensor& tensor) {
  NonFiniteCount count;
  DataType t = tensor.dtype();
  if (!t.isFloat()) return count;
  Tensor host = tensor.to(Device::cpu());
  // By the bits, for every float width: all exponent bits set is infinity (zero mantissa) or NaN.
  auto scan = [&](auto word, uint64_t exponentMask, uint64_t mantissaMask) {
    using Word = decltype(word);
    const Word* p = static_cast<const Word*>(host.data());
    for (int64_t i = 0; i < host.numel(); ++i) {
      uint64_t bits = uint64_t(p[i]);
      if ((bits & exponentMask) != exponentMask) continue;
      if (bits & mantissaMask) ++count.nan;
      else ++count.infinite;
    }
  };
  if (t.bits == 16) scan(uint16_t(0), 0x7c00, 0x03ff);
  else if (t.bits == 32) scan(uint32_t(0), 0x7f800000, 0x007fffff);
  else if (t.bits == 64) scan(uint64_t(0), 0x7ff0000000000000ULL, 0x000fffffffffffffULL);
  return count;
}

std::string NonFiniteCount::describe() const {
  std::vector<std::string> parts;
  if (nan) parts.push_back(fmt::format("{} NaN", nan));
  if (infinite) parts.push_back(fmt::format("{} infinite", infinite));
  return fmt::format("{} value{}", fmt::join(parts, " and "), nan + infinite == 1 ? "" : "s");
}

}  // namespace tessel::runtime
