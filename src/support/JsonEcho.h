/// A JSON value as written, for error messages: short values whole, long ones cut to about 80
/// characters. The value is walked with a budget and never serialized whole, so echoing a
/// value of a billion elements, a string of a gigabyte or an array nested as deep as memory
/// allows costs about as much as echoing "[1,2,3]" (nlohmann's dump would copy all of it, and
/// recurse once per level until the stack overflows).
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace tessel {

/// How many characters jsonEcho writes at most ("..." included).
inline constexpr size_t kJsonEchoChars = 80;

/// `value` as compact JSON when it fits kJsonEchoChars, else its first characters and "...".
/// A float is written as the shortest text that reads back as the same double (1e+23, 8.5,
/// 2.0), what a person typed far more often than 9.999999999999999e+22.
std::string jsonEcho(const nlohmann::json& value);

}  // namespace tessel
