#include "vta/HardwareConfig.h"

#include <fmt/format.h>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Json.h"
#include "support/TempDir.h"
#include "vta/InstructionSet.h"

namespace tessel::vta {

namespace {

/// The integer keys of vta_config.json, in the order of the public file, with the member each
/// one sets; shared by reading, writing and describing.
struct IntegerKey {
  const char* name;
  int HardwareConfig::*member;
};
constexpr IntegerKey kIntegerKeys[] = {
    {"LOG_INP_WIDTH", &HardwareConfig::logInputWidth},
    {"LOG_WGT_WIDTH", &HardwareConfig::logWeightWidth},
    {"LOG_ACC_WIDTH", &HardwareConfig::logAccumulatorWidth},
    {"LOG_BATCH", &HardwareConfig::logBatch},
    {"LOG_BLOCK", &HardwareConfig::logBlock},
    {"LOG_UOP_BUFF_SIZE", &HardwareConfig::logMicroOpBufferSize},
    {"LOG_INP_BUFF_SIZE", &HardwareConfig::logInputBufferSize},
    {"LOG_WGT_BUFF_SIZE", &HardwareConfig::logWeightBufferSize},
    {"LOG_ACC_BUFF_SIZE", &HardwareConfig::logAccumulatorBufferSize},
};

/// Parses "a.b.c" into a comparable number; returns -1 when the text is not of that form.
long versionNumber(const std::string& version) {
  long parts[3] = {0, 0, 0};
  int part = 0;
  bool digitSeen = false;
  for (char c : version) {
    if (c == '.') {
      if (!digitSeen || ++part > 2) return -1;
      digitSeen = false;
    } else if (c >= '0' && c <= '9') {
      parts[part] = parts[part] * 10 + (c - '0');
      if (parts[part] > 999) return -1;
      digitSeen = true;
    } else {
      return -1;
    }
  }
  if (part != 2 || !digitSeen) return -1;
  return parts[0] * 1000000 + parts[1] * 1000 + parts[2];
}

}  // namespace

bool HardwareConfig::hasMultiply() const { return versionNumber(hardwareVersion) >= 2; }

std::string HardwareConfig::bitstreamName() const {
  return fmt::format("{}x{}_i{}w{}a{}_{}_{}_{}_{}", batch(), blockIn(), inputWidth(), weightWidth(),
                     accumulatorWidth(), logMicroOpBufferSize, logInputBufferSize,
                     logWeightBufferSize, logAccumulatorBufferSize);
}

void HardwareConfig::validate() const {
  TESSEL_CHECK(!target.empty(), "VTA config: TARGET must not be empty");
  TESSEL_CHECK(versionNumber(hardwareVersion) >= 0,
               "VTA config: HW_VER '{}' is not of the form MAJOR.MINOR.PATCH", hardwareVersion);
  // The public simulator packs narrower data into words; this model keeps int8 data and
  // int32 accumulators, the only widths the public tutorials, HLS and Chisel designs use.
  TESSEL_CHECK(logInputWidth == 3, "VTA config: LOG_INP_WIDTH={} is not modelled (only 3: int8 inputs)",
               logInputWidth);
  TESSEL_CHECK(logWeightWidth == 3,
               "VTA config: LOG_WGT_WIDTH={} is not modelled (only 3: int8 weights)", logWeightWidth);
  TESSEL_CHECK(logAccumulatorWidth == 5,
               "VTA config: LOG_ACC_WIDTH={} is not modelled (only 5: int32 accumulators)",
               logAccumulatorWidth);
  TESSEL_CHECK(logBatch >= 0 && logBatch <= 4, "VTA config: LOG_BATCH={} is out of range [0, 4]",
               logBatch);
  TESSEL_CHECK(logBlock >= 1 && logBlock <= 6, "VTA config: LOG_BLOCK={} is out of range [1, 6]",
               logBlock);
  struct Buffer {
    const char* key;
    int logSize;
    int logDepth;
  };
  const Buffer buffers[] = {{"LOG_UOP_BUFF_SIZE", logMicroOpBufferSize, logMicroOpDepth()},
                            {"LOG_INP_BUFF_SIZE", logInputBufferSize, logInputDepth()},
                            {"LOG_WGT_BUFF_SIZE", logWeightBufferSize, logWeightDepth()},
                            {"LOG_ACC_BUFF_SIZE", logAccumulatorBufferSize, logAccumulatorDepth()}};
  for (const Buffer& buffer : buffers) {
    TESSEL_CHECK(buffer.logDepth >= 1,
                 "VTA config: {}={} holds fewer than 2 elements (log2 depth {})", buffer.key,
                 buffer.logSize, buffer.logDepth);
    // LOAD/STORE address SRAM with a 16-bit field.
    TESSEL_CHECK(buffer.logDepth <= 16,
                 "VTA config: {}={} gives 2^{} elements, more than the 16-bit SRAM address of "
                 "LOAD/STORE can reach",
                 buffer.key, buffer.logSize, buffer.logDepth);
  }
  // The index fields must fit the fixed instruction and micro-op sizes.
  InstructionLayout::forConfig(*this);
}

HardwareConfig HardwareConfig::fromJson(const nlohmann::json& json) {
  TESSEL_CHECK(json.is_object(), "VTA config: expected a JSON object, got {}", json.type_name());
  HardwareConfig config;
  for (const auto& [key, value] : json.items()) {
    if (key == "TARGET" || key == "HW_VER") {
      TESSEL_CHECK(value.is_string(), "VTA config: {} must be a string", key);
      (key == "TARGET" ? config.target : config.hardwareVersion) = value.get<std::string>();
      continue;
    }
    bool known = false;
    for (const IntegerKey& integerKey : kIntegerKeys) {
      if (key != integerKey.name) continue;
      TESSEL_CHECK(value.is_number_integer(), "VTA config: {} must be an integer, got {}", key, jsonEcho(value));
      config.*integerKey.member = value.get<int>();
      known = true;
    }
    TESSEL_CHECK(known, "VTA config: unknown key '{}'", key);
  }
  for (const char* required : {"TARGET", "HW_VER"})
    TESSEL_CHECK(json.contains(required), "VTA config: missing key {}", required);
  for (const IntegerKey& integerKey : kIntegerKeys)
    TESSEL_CHECK(json.contains(integerKey.name), "VTA config: missing key {}", integerKey.name);
  config.validate();
  return config;
}

HardwareConfig HardwareConfig::fromFile(const std::string& path) {
  nlohmann::json json = parseJson(readFile(path, file_kinds::kVtaConfig), fmt::format("VTA config {}", path));
  try {
    return fromJson(json);
  } catch (const Error& error) {
    throw error.withContext(path);
  }
}

nlohmann::json HardwareConfig::toJson() const {
  nlohmann::json json = nlohmann::json::object();
  json["TARGET"] = target;
  json["HW_VER"] = hardwareVersion;
  for (const IntegerKey& integerKey : kIntegerKeys) json[integerKey.name] = this->*integerKey.member;
  return json;
}

std::string HardwareConfig::describe() const {
  std::string text;
  auto line = [&text](const std::string& name, const std::string& value) {
    text += fmt::format("  {:<26}{}\n", name, value);
  };
  text += "VTA hardware configuration\n";
  line("TARGET", target);
  line("HW_VER", hardwareVersion);
  for (const IntegerKey& integerKey : kIntegerKeys)
    line(integerKey.name, std::to_string(this->*integerKey.member));
  text += "Derived\n";
  line("model", modelName());
  line("BATCH", std::to_string(batch()));
  line("BLOCK_IN", std::to_string(blockIn()));
  line("BLOCK_OUT", std::to_string(blockOut()));
  line("data widths (bits)", fmt::format("input {}, weight {}, accumulator {}, output {}",
                                         inputWidth(), weightWidth(), accumulatorWidth(),
                                         outputWidth()));
  line("ALU opcodes", hasMultiply() ? "MIN MAX ADD SHR MUL" : "MIN MAX ADD SHR");
  struct Row {
    const char* name;
    int logSize;
    int elementBytes;
    int logDepth;
  };
  const Row rows[] = {
      {"micro-op buffer", logMicroOpBufferSize, microOpBytes(), logMicroOpDepth()},
      {"input buffer", logInputBufferSize, inputElementBytes(), logInputDepth()},
      {"weight buffer", logWeightBufferSize, weightElementBytes(), logWeightDepth()},
      {"accumulator buffer", logAccumulatorBufferSize, accumulatorElementBytes(),
       logAccumulatorDepth()},
      {"output buffer", logOutputBufferSize(), outputElementBytes(), logAccumulatorDepth()},
  };
  for (const Row& row : rows)
    line(row.name, fmt::format("{} B = {} elements of {} B (index width {} bits)",
                               1L << row.logSize, 1L << row.logDepth, row.elementBytes,
                               row.logDepth));
  line("instruction", fmt::format("{} B", instructionBytes()));
  return text;
}

}  // namespace tessel::vta
