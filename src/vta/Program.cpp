#include "vta/Program.h"

#include <fmt/format.h>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Json.h"
#include "support/TempDir.h"
#include "vta/Simulator.h"

namespace tessel::vta {

namespace {

constexpr const char* kFormatName = "tessel-vta-program";
constexpr int kFormatVersion = 1;

std::string toHex(const uint8_t* bytes, size_t count) {
  static const char digits[] = "0123456789abcdef";
  std::string text(count * 2, '0');
  for (size_t i = 0; i < count; ++i) {
    text[2 * i] = digits[bytes[i] >> 4];
    text[2 * i + 1] = digits[bytes[i] & 15];
  }
  return text;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<uint8_t> fromHex(const std::string& text, const std::string& what) {
  TESSEL_CHECK(text.size() % 2 == 0, "{}: hex text has an odd number of digits", what);
  std::vector<uint8_t> bytes(text.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int high = hexDigit(text[2 * i]), low = hexDigit(text[2 * i + 1]);
    TESSEL_CHECK(high >= 0 && low >= 0, "{}: '{}' is not a hex digit pair", what,
                 text.substr(2 * i, 2));
    bytes[i] = uint8_t(high * 16 + low);
  }
  return bytes;
}

}  // namespace

nlohmann::json Program::toJson() const {
  nlohmann::json json;
  json["format"] = kFormatName;
  json["version"] = kFormatVersion;
  json["config"] = config.toJson();
  nlohmann::json words = nlohmann::json::array();
  for (const EncodedInstruction& bits : instructions)
    words.push_back(fmt::format("{:016x}{:016x}", bits[1], bits[0]));
  json["instructions"] = std::move(words);
  nlohmann::json segments = nlohmann::json::array();
  for (const Segment& segment : memory) {
    // Trailing zeros are implied, so room for outputs costs nothing.
    size_t used = std::min<size_t>(segment.data.size(), segment.bytes);
    while (used > 0 && segment.data[used - 1] == 0) --used;
    segments.push_back({{"address", segment.address},
                        {"bytes", segment.bytes},
                        {"hex", toHex(segment.data.data(), used)}});
  }
  json["memory"] = std::move(segments);
  nlohmann::json labels = nlohmann::json::array();
  for (const NamedRange& output : outputs)
    labels.push_back({{"name", output.name}, {"address", output.address}, {"bytes", output.bytes}});
  json["outputs"] = std::move(labels);
  return json;
}

// A board's DRAM; far above any program's image, and a bound on what a file can make us allocate.
constexpr int64_t kMaxImageBytes = int64_t(4) << 30;

Program Program::fromJson(const nlohmann::json& json) {
  try {
    TESSEL_CHECK(json.is_object() && json.value("format", "") == kFormatName,
                 "not a VTA program (expected \"format\": \"{}\")", kFormatName);
    TESSEL_CHECK(json.value("version", 0) == kFormatVersion, "unsupported version {} (expected {})",
                 json.value("version", 0), kFormatVersion);
    Program program;
    program.config = HardwareConfig::fromJson(json.at("config"));
    for (const auto& word : json.at("instructions")) {
      const std::string text = word.get<std::string>();
      const std::string what = fmt::format("instruction #{}", program.instructions.size());
      TESSEL_CHECK(text.size() == 32, "{}: expected 32 hex digits, got '{}'", what, text);
      const std::vector<uint8_t> bytes = fromHex(text, what);  // most significant byte first
      EncodedInstruction bits{0, 0};
      for (int i = 0; i < 16; ++i) bits[1 - i / 8] = (bits[1 - i / 8] << 8) | bytes[i];
      program.instructions.push_back(bits);
    }
    uint64_t imageBytes = 0;
    for (const auto& entry : json.at("memory")) {
      Segment segment;
      std::string where = fmt::format("memory[{}]", program.memory.size());
      segment.address = uint64_t(jsonInteger(entry.at("address"), where + ".address", 0, INT64_MAX));
      segment.bytes = uint64_t(jsonInteger(entry.at("bytes"), where + ".bytes", 1, kMaxImageBytes));
      imageBytes += segment.bytes;
      TESSEL_CHECK(imageBytes <= kMaxImageBytes, "{}: the memory image passes {} bytes", where, kMaxImageBytes);
      segment.data = fromHex(entry.value("hex", ""), fmt::format("memory at {:#x}", segment.address));
      TESSEL_CHECK(segment.data.size() <= segment.bytes,
                   "memory at {:#x}: {} bytes of data for a {}-byte allocation", segment.address,
                   segment.data.size(), segment.bytes);
      program.memory.push_back(std::move(segment));
    }
    if (json.contains("outputs"))
      for (const auto& entry : json.at("outputs"))
        program.outputs.push_back({entry.at("name").get<std::string>(),
                                   uint64_t(jsonInteger(entry.at("address"), "outputs: address", 0, INT64_MAX)),
                                   uint64_t(jsonInteger(entry.at("bytes"), "outputs: bytes", 0, kMaxImageBytes))});
    return program;
  } catch (const nlohmann::json::exception& error) {
    fail("VTA program: malformed: {}", error.what());
  } catch (const Error& error) {
    throw error.withContext("VTA program");
  }
}

void Program::save(const std::string& path) const { writeFile(path, toJson().dump(1) + "\n"); }

Program Program::load(const std::string& path) {
  nlohmann::json json = parseJson(readFile(path, file_kinds::kVtaProgram), fmt::format("VTA program {}", path));
  try {
    return fromJson(json);
  } catch (const Error& error) {
    throw error.withContext(path);
  }
}

void Program::runOn(Simulator& simulator) const {
  TESSEL_CHECK(simulator.config() == config,
               "VTA program: built for {} but the simulator is {}", config.modelName(),
               simulator.config().modelName());
  for (const Segment& segment : memory) {
    simulator.memory().allocateAt(segment.address, segment.bytes);
    simulator.memory().write(segment.address, segment.data.data(), segment.data.size());
  }
  TESSEL_CHECK(!instructions.empty(), "VTA program: no instructions");
  const uint64_t bytes = instructions.size() * sizeof(EncodedInstruction);
  const uint64_t address = simulator.memory().allocate(bytes);
  simulator.memory().write(address, instructions.data(), bytes);
  simulator.run(address, uint32_t(instructions.size()));
  simulator.memory().release(address);
}

}  // namespace tessel::vta
