/// Reading JSON that came from outside: the parsing policy (JsonParse.h: every failure an Error
/// naming where the text came from; limits on size and nesting) and strict readers of values
/// that say what was wrong with the value as it was written (JsonEcho.h): 8.5 is not an
/// integer, 1e23 is not an int64, 70000 is not a port.
#pragma once
#include <nlohmann/json.hpp>

#include "support/JsonEcho.h"
#include "support/JsonParse.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

/// `value` as an integer in [min, max]. Only JSON integers are accepted (8.5 and 1e3 are not,
/// and neither is a value beyond int64); the error names `where` and echoes the value.
int64_t jsonInteger(const nlohmann::json& value, const std::string& where,
                    int64_t min = std::numeric_limits<int64_t>::min(),
                    int64_t max = std::numeric_limits<int64_t>::max());

/// An array of integers, each checked as jsonInteger does; `where[i]` names a bad element.
std::vector<int64_t> jsonIntegers(const nlohmann::json& value, const std::string& where,
                                  int64_t min = std::numeric_limits<int64_t>::min(),
                                  int64_t max = std::numeric_limits<int64_t>::max());

/// `value` as a finite number in [min, max] (an integer or not).
double jsonNumber(const nlohmann::json& value, const std::string& where,
                  double min = -std::numeric_limits<double>::max(), double max = std::numeric_limits<double>::max());

/// `value` as a string.
std::string jsonString(const nlohmann::json& value, const std::string& where);

/// The member `key` of the object `object`; an Error naming `where.key` when it is missing or
/// `object` is not an object.
const nlohmann::json& jsonMember(const nlohmann::json& object, const std::string& where, const std::string& key);

}  // namespace tessel
