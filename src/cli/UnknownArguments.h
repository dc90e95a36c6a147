/// What the `tessel` command says about a command line with words it does not know: the
/// nearest known option or subcommand of the command they were given to (`--n-trials 4` to
/// tune: "did you mean --n-trial?"), instead of CLI11's "The following arguments were not
/// expected: 4 --n-trials".
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace tessel::cli {

/// The number of single-character insertions, deletions and substitutions (and swaps of two
/// neighbours) that turn `a` into `b`.
size_t editDistance(const std::string& a, const std::string& b);

/// The one of `known` nearest to `word`, when it is near enough to be what was meant (within
/// a third of its length, at least 2 edits); empty otherwise.
std::string nearestName(const std::string& word, const std::vector<std::string>& known);

/// The message for `app`'s parse that left arguments nobody took (CLI::ExtrasError): the first
/// of them, the command it was given to ("tessel tune") and the nearest option or subcommand
/// of that command.
std::string describeUnknownArguments(const CLI::App& app);

/// The exit code of a command line `app` could not parse (call from its catch block): --help and
/// --version succeed (0, CLI11 prints them); every other mistake is kExitUsage (2), the usage-error
/// code of POSIX utilities, after one message on stderr: words the parser left over named with
/// the nearest known option or command (an unknown command leaves the subcommand missing, a
/// misspelt required option the option), or CLI11's own.
int reportParseError(CLI::App& app, const CLI::ParseError& error);

}  // namespace tessel::cli
