#include "cli/OptionChecks.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace tessel::cli {

namespace {

bool parseWhole(const std::string& text, double& value) {
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end;
}

}  // namespace

CLI::Validator integerIn(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        int64_t value = 0;
        const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
        const char* end = text.data() + text.size();
        auto [ptr, error] = std::from_chars(begin, end, value);
        if (error == std::errc() && ptr == end) {
          if (value < min || value > max) return fmt::format("{} is out of range [{}, {}]", text, min, max);
          return "";
        }
        double number = 0;
        if (parseWhole(text, number)) {
          bool integral = std::isfinite(number) && number == std::floor(number);
          if (integral && (number < double(min) || number > double(max)))
            return fmt::format("{} is out of range [{}, {}]", text, min, max);
          if (integral) return fmt::format("{} is not an integer as written (write it in digits: {:.0f})", text, number);
          return fmt::format("{} is not an integer", text);
        }
        return fmt::format("'{}' is not an integer", text);
      },
      fmt::format("INT in [{}, {}]", min, max));
}

CLI::Validator numberIn(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double value = 0;
        if (!parseWhole(text, value)) return fmt::format("'{}' is not a number", text);
        if (!std::isfinite(value)) return fmt::format("{} is not a finite number", text);
        if (value < min || value > max) return fmt::format("{} is out of range [{}, {}]", text, min, max);
        return "";
      },
      fmt::format("NUMBER in [{}, {}]", min, max));
}

CLI::Validator oneOf(const std::vector<std::string>& values) { return CLI::IsMember(values, CLI::ignore_case); }

CLI::Validator lowerCase() {
  return CLI::Validator(
      [](std::string& text) {
        text = CLI::detail::to_lower(text);
        return std::string();
      },
      "");
}

}  // namespace tessel::cli
