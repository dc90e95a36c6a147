/// tessel's Error (support/ErrorType.h) with the ways the sources raise it: `fail` with a
/// fmt-formatted message, and the checks of bad input and of internal invariants.
#pragma once
#include <string>
#include <fmt/format.h>

#include "support/ErrorType.h"

namespace tessel {

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
