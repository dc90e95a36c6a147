/// How a subcommand's callback fails: a tessel Error is printed as `error: ...` on stderr and
/// becomes exit code 1 through CLI11 (an uncaught exception from a callback would abort).
#pragma once
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "support/Error.h"

namespace tessel::cli {

template <class Body>
void reportingErrors(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    throw CLI::RuntimeError(1);
  }
}

}  // namespace tessel::cli
