#include "support/JsonParse.h"

#include "support/Error.h"

namespace tessel {

using nlohmann::json;

namespace {

/// nlohmann's own DOM builder (what json::parse uses) behind a gate that counts open arrays
/// and objects: the parser reports every bracket to it in order, so the count is the nesting
/// depth exactly as the parser sees it, strings and escapes included, with no second pass
/// over the text. Returning false stops the parser at the first bracket past the limit.
class DepthLimitedBuilder {
 public:
  using Builder = nlohmann::detail::json_sax_dom_parser<json>;

  DepthLimitedBuilder(json& result, size_t maxDepth, bool allowExceptions)
      : builder_(result, allowExceptions), maxDepth_(maxDepth) {}

  bool tooDeep() const { return tooDeep_; }
  bool errored() const { return builder_.is_errored(); }

  bool start_object(size_t elements) { return open() && builder_.start_object(elements); }
  bool start_array(size_t elements) { return open() && builder_.start_array(elements); }
  bool end_object() { return close() && builder_.end_object(); }
  bool end_array() { return close() && builder_.end_array(); }

  bool null() { return builder_.null(); }
  bool boolean(bool value) { return builder_.boolean(value); }
  bool number_integer(json::number_integer_t value) { return builder_.number_integer(value); }
  bool number_unsigned(json::number_unsigned_t value) { return builder_.number_unsigned(value); }
  bool number_float(json::number_float_t value, const json::string_t& text) { return builder_.number_float(value, text); }
  bool string(json::string_t& value) { return builder_.string(value); }
  bool binary(json::binary_t& value) { return builder_.binary(value); }
  bool key(json::string_t& value) { return builder_.key(value); }
  template <typename Exception>
  bool parse_error(size_t position, const std::string& token, const Exception& error) {
    return builder_.parse_error(position, token, error);
  }

 private:
  bool open() {
    if (++depth_ <= maxDepth_) return true;
    tooDeep_ = true;
    return false;
  }
  bool close() {
    --depth_;
    return true;
  }

  Builder builder_;
  size_t maxDepth_;
  size_t depth_ = 0;
  bool tooDeep_ = false;
};

std::string withWhere(const std::string& where, const std::string& message) {
  return where.empty() ? message : where + ": " + message;
}

std::string sizeMessage(std::string_view text, const JsonLimits& limits) {
  return fmt::format("{} bytes of JSON, more than this reader accepts ({})", text.size(), limits.maxBytes);
}

std::string depthMessage(const JsonLimits& limits) { return fmt::format("JSON nested deeper than {} levels", limits.maxDepth); }

}  // namespace

json parseJson(std::string_view text, const std::string& where, const JsonLimits& limits) {
  if (text.size() > limits.maxBytes) throw Error(withWhere(where, sizeMessage(text, limits)));
  json result;
  DepthLimitedBuilder builder(result, limits.maxDepth, /*allowExceptions=*/true);
  try {
    json::sax_parse(text, &builder);
  } catch (const json::exception& e) {
    // nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
    // column 3: ..."; the part after the bracket says what and where.
    std::string message = e.what();
    if (message.rfind("[json.exception.", 0) == 0)
      if (size_t end = message.find("] "); end != std::string::npos) message = message.substr(end + 2);
    throw Error(withWhere(where, "not valid JSON: " + message));
  }
  if (builder.tooDeep()) throw Error(withWhere(where, depthMessage(limits)));
  return result;
}

std::optional<json> tryParseJson(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.maxBytes) return std::nullopt;
  json result;
  DepthLimitedBuilder builder(result, limits.maxDepth, /*allowExceptions=*/false);
  // Without exceptions the builder reports a syntax error by returning false, as the gate does
  // past the limit; anything else nlohmann throws (none is known for text input) is bad text too.
  try {
    if (!json::sax_parse(text, &builder) || builder.errored() || builder.tooDeep()) return std::nullopt;
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return result;
}

}  // namespace tessel
