#include "support/DataType.h"

#include "support/Error.h"

namespace tessel {

std::string DataType::str() const {
  std::string base;
  switch (code) {
    case Code::Int: base = "int" + std::to_string(bits); break;
    case Code::UInt: base = "uint" + std::to_string(bits); break;
    case Code::Float: base = "float" + std::to_string(bits); break;
    case Code::Bool: base = "bool"; break;
    case Code::Handle: base = "handle"; break;
  }
  if (lanes > 1) base += "x" + std::to_string(lanes);
  return base;
}

DataType DataType::parse(const std::string& text) {
  std::string name = text;
  int lanes = 1;
  auto x = name.find('x');
  if (x != std::string::npos) {
    try {
      lanes = std::stoi(name.substr(x + 1));
    } catch (...) {
      fail("invalid dtype '{}': bad lane count", text);
    }
    name = name.substr(0, x);
  }
  auto withBits = [&](Code c, const std::string& prefix) -> DataType {
    std::string digits = name.substr(prefix.size());
    int bits = 0;
    try {
      bits = std::stoi(digits);
    } catch (...) {
      fail("invalid dtype '{}'", text);
    }
    bool ok = (c == Code::Float) ? (bits == 16 || bits == 32 || bits == 64)
                                 : (bits == 8 || bits == 16 || bits == 32 || bits == 64);
    TESSEL_CHECK(ok, "invalid dtype '{}': unsupported bit width {}", text, bits);
    return DataType(c, bits, lanes);
  };
  if (name == "bool") return DataType::boolean(lanes);
  if (name == "handle") return DataType::handle();
  if (name.rfind("float", 0) == 0) return withBits(Code::Float, "float");
  if (name.rfind("uint", 0) == 0) return withBits(Code::UInt, "uint");
  if (name.rfind("int", 0) == 0) return withBits(Code::Int, "int");
  fail("invalid dtype '{}': expected float16/32/64, int8/16/32/64, uint8/16/32/64 or bool", text);
}

}  // namespace tessel
