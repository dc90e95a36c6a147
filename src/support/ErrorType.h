/// The one exception type of tessel, on its own: the standard library and nothing else, so that
/// the runtime's installed headers (a deployed program catches tessel::Error) need no formatting
/// library. support/Error.h adds the formatted `fail` and the checks the sources use.
#pragma once
#include <stdexcept>
#include <string>

namespace tessel {

/// Every user-facing failure (bad input, a bad schedule step, a toolchain failure, a wrong kernel
/// argument) is an Error whose message names the problem and where it happened; callers add
/// context as the error travels up.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  /// A new error whose message is `context: <this message>`.
  Error withContext(const std::string& context) const { return Error(context + ": " + what()); }
};

}  // namespace tessel
