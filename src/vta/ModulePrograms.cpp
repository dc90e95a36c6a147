#include "vta/ModulePrograms.h"

#include <fmt/format.h>

#include <set>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Json.h"

namespace tessel::vta {

namespace {

constexpr const char* kProgramsFormatName = "tessel-vta-module-programs";
constexpr int kProgramsFormatVersion = 1;
/// Far above any network's call count or a call's argument count: a larger number is corruption.
constexpr int64_t kMaxCalls = int64_t(1) << 24;

CallProgram callFromJson(const nlohmann::json& entry, const HardwareConfig& config) {
  CallProgram c;
  c.call = size_t(jsonInteger(jsonMember(entry, "", "call"), "call", 0, kMaxCalls));
  c.name = jsonString(jsonMember(entry, "", "name"), "name");
  c.storedBytes = int(jsonInteger(jsonMember(entry, "", "stored_bytes"), "stored_bytes", 1, 4));
  TESSEL_CHECK(c.storedBytes == 1 || c.storedBytes == 4, "stored_bytes {} (1 or 4)", c.storedBytes);
  if (entry.contains("description")) c.description = entry.at("description");
  c.program = Program::fromJson(jsonMember(entry, "", "program"));
  TESSEL_CHECK(c.program.config == config, "the program is built for {}, the module for {}", c.program.config.modelName(),
               config.modelName());
  const nlohmann::json& arguments = jsonMember(entry, "", "arguments");
  TESSEL_CHECK(arguments.is_array() && !arguments.empty(), "arguments: expected a non-empty array (the inputs, then the output)");
  for (size_t k = 0; k < arguments.size(); ++k) {
    std::string where = fmt::format("arguments[{}]", k);
    CallProgram::Argument a;
    a.segment = size_t(jsonInteger(jsonMember(arguments[k], where, "segment"), where + ".segment", 0, kMaxCalls));
    a.bytes = uint64_t(jsonInteger(jsonMember(arguments[k], where, "bytes"), where + ".bytes", 0, INT64_MAX));
    const nlohmann::json& constant = jsonMember(arguments[k], where, "constant");
    TESSEL_CHECK(constant.is_boolean(), "{}.constant: expected true or false, got {}", where, jsonEcho(constant));
    a.constant = constant.get<bool>();
    TESSEL_CHECK(a.segment < c.program.memory.size(), "{}: segment {} of a program with {} memory segments", where, a.segment,
                 c.program.memory.size());
    TESSEL_CHECK(a.bytes <= c.program.memory[a.segment].bytes, "{}: {} bytes in a segment of {}", where, a.bytes,
                 c.program.memory[a.segment].bytes);
    c.arguments.push_back(a);
  }
  TESSEL_CHECK(!c.arguments.back().constant, "the output (the last argument) is marked constant");
  return c;
}

}  // namespace

nlohmann::json ModulePrograms::toJson() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const CallProgram& c : calls) {
    nlohmann::json arguments = nlohmann::json::array();
    for (const CallProgram::Argument& a : c.arguments)
      arguments.push_back({{"segment", a.segment}, {"bytes", a.bytes}, {"constant", a.constant}});
    entries.push_back({{"call", c.call},
                      {"name", c.name},
                      {"arguments", std::move(arguments)},
                      {"stored_bytes", c.storedBytes},
                      {"description", c.description},
                      {"program", c.program.toJson()}});
  }
  return {{"format", kProgramsFormatName}, {"version", kProgramsFormatVersion}, {"config", config.toJson()}, {"calls", std::move(entries)}};
}

ModulePrograms ModulePrograms::fromJson(const nlohmann::json& json) {
  TESSEL_CHECK(json.is_object() && json.value("format", "") == kProgramsFormatName, "not VTA module programs (expected \"format\": \"{}\")",
               kProgramsFormatName);
  int64_t version = jsonInteger(jsonMember(json, "", "version"), "version");
  TESSEL_CHECK(version == kProgramsFormatVersion, "version {} is not supported (this runtime reads version {})", version, kProgramsFormatVersion);
  ModulePrograms programs;
  try {
    programs.config = HardwareConfig::fromJson(jsonMember(json, "", "config"));
  } catch (const Error& e) {
    throw e.withContext("config");
  }
  const nlohmann::json& calls = jsonMember(json, "", "calls");
  TESSEL_CHECK(calls.is_array(), "calls: expected an array");
  std::set<size_t> seen;
  for (size_t i = 0; i < calls.size(); ++i) {
    try {
      programs.calls.push_back(callFromJson(calls[i], programs.config));
    } catch (const Error& e) {
      std::string name = calls[i].is_object() && calls[i].contains("name") && calls[i]["name"].is_string()
                             ? " ('" + calls[i]["name"].get<std::string>() + "')"
                             : "";
      throw e.withContext(fmt::format("calls[{}]{}", i, name));
    }
    TESSEL_CHECK(seen.insert(programs.calls.back().call).second, "calls[{}]: call {} has two programs", i,
                 programs.calls.back().call);
  }
  return programs;
}

void ModulePrograms::save(const std::string& path) const { writeFile(path, toJson().dump() + "\n"); }

ModulePrograms ModulePrograms::load(const std::string& path) {
  nlohmann::json json = parseJson(readFile(path, file_kinds::kVtaProgram), path);
  try {
    return fromJson(json);
  } catch (const Error& e) {
    throw e.withContext(path);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed: {}", path, e.what());
  }
}

}  // namespace tessel::vta
