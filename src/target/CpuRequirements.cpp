#include "target/CpuRequirements.h"

#include <sstream>

#include "support/Error.h"

namespace tessel::target {

namespace {

/// The architecture of a class name: "x86_64-avx2" -> "x86_64".
std::string archOfClass(const std::string& isaClass) {
  for (const char* arch : {"x86_64", "aarch64", "arm"})
    if (isaClass == arch || isaClass.rfind(std::string(arch) + "-", 0) == 0) return arch;
  return "";
}

}  // namespace

CpuRequirements CpuRequirements::of(const CpuMachine& machine) {
  return {machine.isaClass(), machine.arch, machine.requiredFeatures()};
}

CpuRequirements CpuRequirements::parse(const std::string& text, const std::string& where) {
  size_t colon = text.find(':');
  CpuRequirements r;
  r.isaClass = text.substr(0, colon);
  r.arch = archOfClass(r.isaClass);
  TESSEL_CHECK(colon != std::string::npos && !r.arch.empty(),
               "{}: the CPU requirements '{}' are not '<class>: <features>' with a class such as x86_64-avx2", where, text);
  std::istringstream words(text.substr(colon + 1));
  for (std::string feature; words >> feature;) r.features.push_back(feature);
  return r;
}

std::string CpuRequirements::text() const {
  std::string out = isaClass + ":";
  for (const auto& f : features) out += " " + f;
  return out;
}

std::vector<std::string> CpuRequirements::missingOn(const std::string& cpuArch, const CpuFeatureSet& present) const {
  if (cpuArch != arch) return {arch};
  return missingCpuFeatures(features, present);
}

}  // namespace tessel::target
