/// Checks of numeric command-line options, so that every number is refused where it is read
/// when it is not what the option takes: an integer option refuses 8.5 and 1e3 instead of
/// truncating them, every option has a range (a port above 65535 would wrap around to another
/// port, a --min-repeat-ms of 1e300 would never end), and the message echoes the value as the
/// user wrote it.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>

namespace tessel::cli {

/// An integer written in decimal digits (optionally signed) within [min, max].
CLI::Validator integerIn(int64_t min, int64_t max);
/// A finite number within [min, max].
CLI::Validator numberIn(double min, double max);

}  // namespace tessel::cli
