#include "cli/UnknownArguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "cli/ReportErrors.h"

namespace tessel::cli {

size_t editDistance(const std::string& a, const std::string& b) {
  // Optimal string alignment: three rows of the dynamic program.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), size_t(0));
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) current[j] = std::min(current[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::string nearestName(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  size_t bestDistance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& name : known) {
    size_t d = editDistance(word, name);
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
    }
  }
  return best;
}

namespace {

/// The options of a command as they are written: --long and -s.
std::vector<std::string> optionNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::vector<std::string> subcommandNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

}  // namespace

std::string describeUnknownArguments(const CLI::App& app) {
  // The command the words were given to: the last one parsed, with the words left over there.
  const CLI::App* command = &app;
  std::string path = app.get_name();
  for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
    sub = sub->get_subcommands().back();
    command = sub;
    path += " " + sub->get_name();
  }
  std::vector<std::string> left = command->remaining();
  if (left.empty()) left = app.remaining(true);
  if (left.empty()) return "unexpected arguments";
  // A command that has subcommands and got a word it does not know: that word, a misspelt
  // command (the options after it are its). Else an option-like word first: a misspelt option
  // explains the words after it (its values).
  auto isOption = [](const std::string& w) { return w.size() > 1 && w[0] == '-'; };
  auto word = left.begin();
  if (subcommandNames(*command).empty() || isOption(*word)) {
    word = std::find_if(left.begin(), left.end(), isOption);
    if (word == left.end()) word = left.begin();
  }
  const bool option = isOption(*word);
  std::string name = option ? word->substr(0, word->find('=')) : *word;
  std::string nearest = nearestName(name, option ? optionNames(*command) : subcommandNames(*command));
  std::string text = fmt::format("{}: {} of `{}`", name, option ? "unknown option" : "unexpected argument", path);
  if (!nearest.empty()) text += fmt::format("; did you mean {}?", nearest);
  else text += fmt::format(" (`{} --help` lists {})", path, option || subcommandNames(*command).empty() ? "its options" : "its commands");
  return text;
}

int reportParseError(CLI::App& app, const CLI::ParseError& error) {
  bool leftOver = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr ||
                  (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && !app.remaining(true).empty());
  if (leftOver) {
    fmt::print(stderr, "error: {}\n", describeUnknownArguments(app));
    return kExitUsage;
  }
  return app.exit(error) == 0 ? 0 : kExitUsage;
}

}  // namespace tessel::cli
