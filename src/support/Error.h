/// The one exception type of tessel. Every user-facing failure (bad input, a bad schedule
/// step, a toolchain failure, a wrong kernel argument) is an Error whose message names the
/// problem and where it happened; callers add context as the error travels up.
#pragma once
#include <stdexcept>
#include <string>
#include <fmt/format.h>

namespace tessel {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  /// A new error whose message is `context: <this message>`.
  Error withContext(const std::string& context) const { return Error(context + ": " + what()); }
};

/// Throws an Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tessel

/// Checks an invariant that bad input can break; the message says what and where.
#define TESSEL_CHECK(condition, ...)            \
  do {                                          \
    if (!(condition)) ::tessel::fail(__VA_ARGS__); \
  } while (0)

/// Checks an internal invariant: failing it is a bug in tessel, reported with the source line.
#define TESSEL_ICHECK(condition)                                                         \
  do {                                                                                   \
    if (!(condition))                                                                    \
      ::tessel::fail("internal error at {}:{}: check failed: {}", __FILE__, __LINE__, #condition); \
  } while (0)
