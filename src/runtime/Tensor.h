/// An n-dimensional array on a device: the runtime's value type for kernel arguments, network
/// inputs, outputs and parameters. A Tensor is a handle: copying one shares its storage (like a
/// shared_ptr); clone() makes a deep copy. Tensors are always compact (row-major, no strides).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/Device.h"
#include "support/DataType.h"
#include "support/KernelAbi.h"

namespace tessel::runtime {

/// "[64, 32]"; "[]" for a scalar.
std::string formatShape(const std::vector<int64_t>& shape);

/// Which C++ element types may view which dtypes through Tensor::dataAs<T>().
template <class T>
struct ElementTypeOf;
#define TESSEL_RUNTIME_ELEMENT(T, NAME, FIRST, SECOND)                                      \
  template <>                                                                              \
  struct ElementTypeOf<T> {                                                                \
    static constexpr const char* name = NAME;                                              \
    static bool accepts(DataType d) { return d == (FIRST) || d == (SECOND); }              \
  };
TESSEL_RUNTIME_ELEMENT(float, "float", DataType::float32(), DataType::float32())
TESSEL_RUNTIME_ELEMENT(double, "double", DataType::float64(), DataType::float64())
TESSEL_RUNTIME_ELEMENT(int8_t, "int8_t", DataType::int8(), DataType::int8())
TESSEL_RUNTIME_ELEMENT(int16_t, "int16_t", DataType::int16(), DataType::int16())
TESSEL_RUNTIME_ELEMENT(int32_t, "int32_t", DataType::int32(), DataType::int32())
TESSEL_RUNTIME_ELEMENT(int64_t, "int64_t", DataType::int64(), DataType::int64())
TESSEL_RUNTIME_ELEMENT(uint8_t, "uint8_t", DataType::uint8(), DataType::boolean())
/// float16 has no C++ type: its bits are viewed as uint16_t.
TESSEL_RUNTIME_ELEMENT(uint16_t, "uint16_t", DataType(DataType::Code::UInt, 16), DataType::float16())
TESSEL_RUNTIME_ELEMENT(uint32_t, "uint32_t", DataType::uint32(), DataType::uint32())
TESSEL_RUNTIME_ELEMENT(uint64_t, "uint64_t", DataType(DataType::Code::UInt, 64), DataType(DataType::Code::UInt, 64))
TESSEL_RUNTIME_ELEMENT(bool, "bool", DataType::boolean(), DataType::boolean())
#undef TESSEL_RUNTIME_ELEMENT

class Tensor {
 public:
  /// An undefined tensor (defined() is false); most accessors throw on it.
  Tensor() = default;

  /// Allocates an uninitialized tensor. Throws Error for a negative dimension, a vector or
  /// handle dtype, a size that overflows, or a device without runtime support.
  static Tensor empty(std::vector<int64_t> shape, DataType dtype, Device device = Device::cpu());

  bool defined() const { return storage_ != nullptr; }
  const std::vector<int64_t>& shape() const;
  DataType dtype() const;
  Device device() const;
  int ndim() const { return int(shape().size()); }
  int64_t numel() const;
  size_t nbytes() const;
  /// The storage: a host pointer for the CPU, a device pointer (or handle) otherwise.
  void* data() const;

  /// The data as T* on the host. Throws Error unless the tensor is on the CPU and T matches
  /// the dtype: float for float32, double for float64, intN_t/uintN_t for intN/uintN, uint16_t
  /// for float16 (its bits), bool or uint8_t for bool.
  template <class T>
  T* dataAs() const {
    checkElementAccess(ElementTypeOf<std::remove_cv_t<T>>::accepts(dtype()), ElementTypeOf<std::remove_cv_t<T>>::name);
    return static_cast<T*>(data());
  }

  /// Copies exactly nbytes() bytes from host memory into the tensor (Error if `bytes` differs).
  void copyFromHost(const void* source, size_t bytes);
  /// Copies the whole tensor (exactly nbytes() bytes) into host memory.
  void copyToHost(void* destination, size_t bytes) const;
  /// The tensor on another device: itself (shared) when already there, else a new copy.
  Tensor to(Device device) const;
  /// A new tensor with the same shape, dtype, device and contents.
  Tensor clone() const;

  /// The kernel-ABI view of this tensor; its shape pointer stays valid while any Tensor sharing
  /// this storage lives; strides are NULL (compact).
  TesselTensor abi() const;

  /// Whether two handles share the same storage.
  bool sharesStorageWith(const Tensor& other) const { return storage_ == other.storage_; }

 private:
  struct Storage;
  void checkElementAccess(bool typeMatches, const char* typeName) const;
  const Storage& storage() const;
  std::shared_ptr<Storage> storage_;
};

/// How many elements of a floating-point tensor are NaN or infinite (zero for other dtypes).
/// Commands warn with it: a NaN in the weights or the input does not always show in the
/// output (max-based operators such as ReLU and max-pool turn it into a number).
struct NonFiniteCount {
  int64_t nan = 0, infinite = 0;
  bool any() const { return nan + infinite > 0; }
  /// "3 NaN and 1 infinite values"
  std::string describe() const;
};
NonFiniteCount countNonFinite(const Tensor& tensor);

}  // namespace tessel::runtime
