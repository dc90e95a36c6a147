#include "support/JsonEcho.h"

#include <fmt/format.h>

#include <string_view>

namespace tessel {

using nlohmann::json;

namespace {

/// Writes a value into a string until the string is one character past the budget (which is
/// how the caller knows it was cut). Every array or object writes its bracket before its
/// elements, so the walk is never deeper than the budget, whatever the value's depth.
class BoundedWriter {
 public:
  explicit BoundedWriter(size_t budget) : budget_(budget) {}

  void value(const json& v) {
    if (full()) return;
    switch (v.type()) {
      case json::value_t::object: {
        append("{");
        bool first = true;
        for (auto it = v.begin(); it != v.end() && !full(); ++it) {
          if (!first) append(",");
          first = false;
          string(it.key());
          append(":");
          value(it.value());
        }
        append("}");
        break;
      }
      case json::value_t::array: {
        append("[");
        for (size_t i = 0; i < v.size() && !full(); ++i) {
          if (i > 0) append(",");
          value(v[i]);
        }
        append("]");
        break;
      }
      case json::value_t::string: string(v.get_ref<const std::string&>()); break;
      case json::value_t::number_float: append(floatText(v.get<double>())); break;
      case json::value_t::number_integer: append(std::to_string(v.get<int64_t>())); break;
      case json::value_t::number_unsigned: append(std::to_string(v.get<uint64_t>())); break;
      case json::value_t::boolean: append(v.get<bool>() ? "true" : "false"); break;
      case json::value_t::null: append("null"); break;
      case json::value_t::binary: append("<binary>"); break;
      case json::value_t::discarded: append("<discarded>"); break;
    }
  }

  const std::string& text() const { return text_; }

 private:
  bool full() const { return text_.size() > budget_; }

  void append(std::string_view piece) {
    if (!full()) text_.append(piece.substr(0, budget_ + 1 - text_.size()));
  }

  /// Quoted and escaped as JSON writes it; only the part that can still show is escaped (a cut
  /// through a UTF-8 sequence is written as U+FFFD).
  void string(const std::string& s) {
    size_t room = budget_ + 1 - text_.size();
    json part = s.size() > room ? s.substr(0, room) : s;
    append(part.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  static std::string floatText(double d) {
    std::string text = fmt::format("{}", d);
    // 2.0 stays a float when written back: "2" would read as an integer.
    if (text.find_first_of(".eEna") == std::string::npos) text += ".0";
    return text;
  }

  size_t budget_;
  std::string text_;
};

}  // namespace

std::string jsonEcho(const json& value) {
  BoundedWriter writer(kJsonEchoChars);
  writer.value(value);
  const std::string& text = writer.text();
  if (text.size() <= kJsonEchoChars) return text;
  // Built in a reserved string: GCC 12 reports a false -Warray-bounds on `substr(...) + "..."`
  // here (it takes the temporary for a short string).
  std::string cut;
  cut.reserve(kJsonEchoChars);
  cut.append(text, 0, kJsonEchoChars - 3).append("...");
  return cut;
}

}  // namespace tessel
