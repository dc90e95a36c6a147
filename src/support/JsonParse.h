/// The one policy for parsing JSON that came from outside (records, graph plans, step lists, VTA
/// configurations and programs, module manifests, worker and RPC messages): a limit on the
/// text's size and on how deeply arrays and objects nest, both enforced while parsing. The
/// nesting limit is what keeps a hostile line such as {"version":[[[...]]]} of 150,000 levels
/// from reaching code that recurses over a value (nlohmann's dump, our own readers) and
/// overflowing the stack; parsing stops at the first bracket past the limit, so refusing it
/// costs no more than reading up to there. Every parse of outside JSON goes through here.
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/Files.h"

namespace tessel {

/// How deeply arrays and objects may nest by default. Everything tessel writes stays far
/// below it (a record is about 8 levels deep, a DAG about 12).
inline constexpr size_t kMaxJsonDepth = 256;

/// The most bytes of JSON text parsed by default: as large as the largest JSON file tessel
/// reads (a VTA program).
inline constexpr uint64_t kMaxJsonBytes = file_kinds::kVtaProgram.maxBytes;

struct JsonLimits {
  size_t maxDepth = kMaxJsonDepth;
  uint64_t maxBytes = kMaxJsonBytes;
};

/// Parses `text`; an Error "<where>: not valid JSON: ..." on any failure of the library (bad
/// syntax, a number beyond a double such as 1e999, invalid UTF-8), "<where>: JSON nested
/// deeper than 256 levels" or "<where>: N bytes of JSON, more than ... (M)" past the limits.
/// Without the prefix when `where` is empty: the caller names the place.
nlohmann::json parseJson(std::string_view text, const std::string& where, const JsonLimits& limits = {});

/// The same policy for a caller that treats any bad text alike (a worker's reply, a request
/// line): the value, or nullopt for text parseJson would refuse. Never throws for bad text.
std::optional<nlohmann::json> tryParseJson(std::string_view text, const JsonLimits& limits = {});

}  // namespace tessel
