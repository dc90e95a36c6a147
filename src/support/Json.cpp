#include "support/Json.h"

#include <cmath>

#include "support/Error.h"

namespace tessel {

using nlohmann::json;

int64_t jsonInteger(const json& value, const std::string& where, int64_t min, int64_t max) {
  int64_t result = 0;
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    TESSEL_CHECK(u <= uint64_t(std::numeric_limits<int64_t>::max()), "{}: {} is out of range [{}, {}]", where, jsonEcho(value),
                 min, max);
    result = int64_t(u);
  } else if (value.is_number_integer()) {
    result = value.get<int64_t>();
  } else if (value.is_number_float()) {
    // JSON writes 1e23 and 8.5 as numbers without an integer type; neither is an integer
    // field's value (a huge integer written out in digits arrives here too).
    double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
      fail("{}: expected an integer written without a fraction or exponent, got {}", where, jsonEcho(value));
    fail("{}: expected an integer, got {}", where, jsonEcho(value));
  } else {
    fail("{}: expected an integer, got {}", where, jsonEcho(value));
  }
  TESSEL_CHECK(result >= min && result <= max, "{}: {} is out of range [{}, {}]", where, jsonEcho(value), min, max);
  return result;
}

std::vector<int64_t> jsonIntegers(const json& value, const std::string& where, int64_t min, int64_t max) {
  TESSEL_CHECK(value.is_array(), "{}: expected an array of integers, got {}", where, jsonEcho(value));
  std::vector<int64_t> result;
  result.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) result.push_back(jsonInteger(value[i], fmt::format("{}[{}]", where, i), min, max));
  return result;
}

double jsonNumber(const json& value, const std::string& where, double min, double max) {
  TESSEL_CHECK(value.is_number(), "{}: expected a number, got {}", where, jsonEcho(value));
  double d = value.get<double>();
  TESSEL_CHECK(std::isfinite(d), "{}: expected a finite number, got {}", where, jsonEcho(value));
  TESSEL_CHECK(d >= min && d <= max, "{}: {} is out of range [{}, {}]", where, jsonEcho(value), min, max);
  return d;
}

std::string jsonString(const json& value, const std::string& where) {
  TESSEL_CHECK(value.is_string(), "{}: expected a string, got {}", where, jsonEcho(value));
  return value.get<std::string>();
}

const json& jsonMember(const json& object, const std::string& where, const std::string& key) {
  TESSEL_CHECK(object.is_object(), "{}: expected an object, got {}", where.empty() ? "the document" : where, jsonEcho(object));
  auto it = object.find(key);
  TESSEL_CHECK(it != object.end(), "{}: missing field '{}'", where.empty() ? "the document" : where, key);
  return *it;
}

}  // namespace tessel
