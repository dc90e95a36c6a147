/// Element types of tensors and expressions: a kind (int, uint, float, bool), a bit width and a
/// number of vector lanes. Shared by the compiler's IR and by the runtime's tensors.
#pragma once
#include <cstdint>
#include <string>

namespace tessel {

struct DataType {
  enum class Code : uint8_t { Int = 0, UInt = 1, Float = 2, Bool = 3, Handle = 4 };
  Code code = Code::Float;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(Code c, int b, int l = 1) : code(c), bits(uint8_t(b)), lanes(uint16_t(l)) {}

  static constexpr DataType float32(int lanes = 1) { return {Code::Float, 32, lanes}; }
  static constexpr DataType float16(int lanes = 1) { return {Code::Float, 16, lanes}; }
  static constexpr DataType float64(int lanes = 1) { return {Code::Float, 64, lanes}; }
  static constexpr DataType int8(int lanes = 1) { return {Code::Int, 8, lanes}; }
  static constexpr DataType int16(int lanes = 1) { return {Code::Int, 16, lanes}; }
  static constexpr DataType int32(int lanes = 1) { return {Code::Int, 32, lanes}; }
  static constexpr DataType int64(int lanes = 1) { return {Code::Int, 64, lanes}; }
  static constexpr DataType uint8(int lanes = 1) { return {Code::UInt, 8, lanes}; }
  static constexpr DataType uint32(int lanes = 1) { return {Code::UInt, 32, lanes}; }
  static constexpr DataType boolean(int lanes = 1) { return {Code::Bool, 1, lanes}; }
  static constexpr DataType handle() { return {Code::Handle, 64, 1}; }

  bool isFloat() const { return code == Code::Float; }
  bool isInt() const { return code == Code::Int; }
  bool isUInt() const { return code == Code::UInt; }
  bool isBool() const { return code == Code::Bool; }
  bool isIntegral() const { return isInt() || isUInt(); }
  bool isScalar() const { return lanes == 1; }
  bool isVector() const { return lanes > 1; }
  DataType element() const { return {code, bits, 1}; }
  DataType withLanes(int l) const { return {code, bits, l}; }
  /// Bytes one element takes in memory (bool is stored in one byte).
  int storageBytes() const { return code == Code::Bool ? 1 : (bits + 7) / 8; }

  bool operator==(const DataType& other) const = default;

  /// "float32", "int8", "bool", "float32x16".
  std::string str() const;
  /// Parses what str() prints; throws Error naming the text on failure.
  static DataType parse(const std::string& text);
};

}  // namespace tessel
