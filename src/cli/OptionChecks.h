/// Checks of numeric command-line options, so that every number is refused where it is read
/// when it is not what the option takes: an integer option refuses 8.5 and 1e3 instead of
/// truncating them, every option has a range (a port above 65535 would wrap around to another
/// port, a --min-repeat-ms of 1e300 would never end), and the message echoes the value as the
/// user wrote it. Options that take one of a few words take it in any case.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::cli {

/// An integer written in decimal digits (optionally signed) within [min, max].
CLI::Validator integerIn(int64_t min, int64_t max);
/// A finite number within [min, max].
CLI::Validator numberIn(double min, double max);
/// One of `values`, in any case: the value becomes the listed spelling (`--layout nhwc` is
/// NHWC), and anything else is refused naming the values. It rewrites the value: give it to
/// an option with ->transform (->check would keep the value as written).
CLI::Validator oneOf(const std::vector<std::string>& values);
/// A transform to lower case, for names checked later (`--tuner XGB` is xgb).
CLI::Validator lowerCase();

}  // namespace tessel::cli
