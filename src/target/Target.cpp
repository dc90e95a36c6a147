#include "target/Target.h"

#include <algorithm>
#include <sstream>

#include "support/Error.h"
#include "target/HostCpu.h"
#include "target/KnownCpus.h"

namespace tessel::target {

namespace {

std::vector<std::string> wordsOf(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

TargetKind kindOfWord(const std::string& word, std::string_view text) {
  if (word == "cpu" || word == "llvm" || word == "c") return TargetKind::Cpu;
  if (word == "cuda") return TargetKind::Cuda;
  if (word == "opencl") return TargetKind::Opencl;
  if (word == "vta") return TargetKind::Vta;
  fail("target '{}': unknown kind '{}' (known: cpu, cuda, opencl, vta; llvm and c mean cpu)", text, word);
}

/// "-name=value" split into name and value; a word without '=' has an empty value.
std::pair<std::string, std::string> optionOf(const std::string& word) {
  size_t eq = word.find('=');
  if (eq == std::string::npos) return {word, ""};
  return {word.substr(0, eq), word.substr(eq + 1)};
}

int parseCount(const std::string& value, int low, int high, const std::string& what, std::string_view text) {
  bool digits = !value.empty() && value.size() <= 6 && value.find_first_not_of("0123456789") == std::string::npos;
  int n = digits ? std::stoi(value) : -1;
  TESSEL_CHECK(digits && n >= low && n <= high, "target '{}': {} must be a number from {} to {}, got '{}'", text, what, low, high,
               value);
  return n;
}

/// The architecture a -mtriple names: its first component.
std::string archOfTriple(const std::string& triple, std::string_view text) {
  TESSEL_CHECK(!triple.empty() && triple.find_first_of(" /") == std::string::npos,
               "target '{}': -mtriple needs a triple such as aarch64-linux-gnu", text);
  if (triple.rfind("aarch64", 0) == 0 || triple.rfind("arm64", 0) == 0) return "aarch64";
  if (triple.rfind("arm", 0) == 0) return "arm";
  if (triple.rfind("x86_64", 0) == 0) return "x86_64";
  fail("target '{}': -mtriple={} names an architecture tessel cannot compile for (aarch64, arm, x86_64)", text, triple);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// The machine model of a CPU target whose flags are parsed: the host's, or a known CPU's.
CpuMachine cpuMachineOf(const Target& t) {
  std::string arch = t.mtriple.empty() ? hostArch() : archOfTriple(t.mtriple, t.text);
  if (t.runsOnHost()) return hostCpu();
  std::string name = t.mcpu.empty() || t.mcpu == "native" ? baselineCpuName(arch) : t.mcpu;
  auto known = knownCpu(arch, name);
  TESSEL_CHECK(known.has_value(),
               "target '{}': unknown CPU '{}' for {} (known: {}); a CPU tessel does not know can be described with "
               "-mcpu set to a known one of its class and -vector-bytes=, -vector-registers=, -l1d=, -l2=, -llc=",
               t.text, name, arch, joined(knownCpuNames(arch)));
  CpuMachine machine = *known;
  machine.fillCacheFallbacks();
  machine.cores = hostCpu().cores;
  machine.coresFrom = "this machine's: the target gives no -num-cores";
  return machine;
}

void applyAttributes(const Target& t, CpuMachine& machine) {
  if (t.mattr.empty()) return;
  const auto& tracked = trackedCpuFeatures(machine.arch);
  for (const auto& attr : t.mattr) {
    std::string feature = attr.substr(1);
    if (std::find(tracked.begin(), tracked.end(), feature) == tracked.end()) continue;  // a compiler flag only
    if (attr[0] == '+') addCpuFeature(machine.features, feature);
    else removeCpuFeature(machine.features, feature);
  }
  machine.deriveVectorFacts();
  machine.featuresFrom += ", then -mattr";
}

}  // namespace

int64_t parseByteSize(const std::string& value, const std::string& what) {
  size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
  std::string suffix = value.substr(digits);
  int shift = suffix.empty() || suffix == "B" ? 0 : suffix == "K" || suffix == "KiB" ? 10 : suffix == "M" || suffix == "MiB" ? 20
                                                  : suffix == "G" || suffix == "GiB" ? 30 : -1;
  TESSEL_CHECK(digits > 0 && digits <= 9 && shift >= 0, "{} must be a size such as 512K, 2M or 1048576, got '{}'", what, value);
  int64_t bytes = std::stoll(value.substr(0, digits)) << shift;
  TESSEL_CHECK(bytes > 0, "{} must be more than 0 bytes, got '{}'", what, value);
  return bytes;
}

TargetKind targetKindOf(std::string_view text) {
  auto words = wordsOf(text);
  TESSEL_CHECK(!words.empty(), "the target string is empty (expected cpu, cuda, opencl or vta)");
  return kindOfWord(words[0], text);
}

std::string targetKindName(std::string_view text) {
  auto words = wordsOf(text);
  if (words.empty()) return "";
  for (const char* known : {"cpu", "llvm", "c", "cuda", "opencl", "vta"})
    if (words[0] == known) {
      Target t;
      t.kind = kindOfWord(words[0], text);
      return t.kindName();
    }
  return words[0];
}

bool Target::runsOnHost() const {
  if (kind != TargetKind::Cpu) return false;
  bool hostCpuName = mcpu.empty() || mcpu == "native";
  bool hostTriple = mtriple.empty() || archOfTriple(mtriple, text) == hostArch();
  return hostCpuName && hostTriple;
}

std::string Target::kindName() const {
  switch (kind) {
    case TargetKind::Cpu: return "cpu";
    case TargetKind::Cuda: return "cuda";
    case TargetKind::Opencl: return "opencl";
    case TargetKind::Vta: return "vta";
  }
  return "?";
}

std::string matmulPrecisionName(MatmulPrecision precision) { return precision == MatmulPrecision::Tf32 ? "tf32" : "fp32"; }

Target Target::host() { return parse("cpu"); }

Target Target::parse(std::string_view text) {
  auto words = wordsOf(text);
  TESSEL_CHECK(!words.empty(), "the target string is empty (expected cpu, cuda, opencl or vta)");
  Target t;
  for (const auto& w : words) t.text += (t.text.empty() ? "" : " ") + w;
  t.kind = kindOfWord(words[0], text);
  // Overrides of the machine model, applied once the model is known.
  struct Override {
    std::string name, value;
  };
  std::vector<Override> overrides;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    auto [name, value] = optionOf(word);
    bool cpu = t.kind == TargetKind::Cpu;
    if (cpu && name == "-mcpu") {
      TESSEL_CHECK(!value.empty(), "target '{}': -mcpu needs a CPU name such as haswell or native", t.text);
      t.mcpu = value;
    } else if (cpu && name == "-mattr") {
      std::istringstream attrs(value);
      for (std::string a; std::getline(attrs, a, ',');) {
        TESSEL_CHECK(a.size() > 1 && (a[0] == '+' || a[0] == '-'), "target '{}': attribute '{}' must start with + or -", t.text, a);
        t.mattr.push_back(a);
      }
    } else if (cpu && name == "-mtriple") {
      archOfTriple(value, t.text);
      t.mtriple = value;
    } else if (cpu && name == "-num-cores") {
      t.numCores = parseCount(value, 1, 9999, "-num-cores", t.text);
    } else if ((cpu || t.kind == TargetKind::Cuda) && name == "-opt-level") {
      t.optLevel = parseCount(value, 0, 3, "-opt-level", t.text);
    } else if (cpu && name == "-cc") {
      TESSEL_CHECK(!value.empty(), "target '{}': -cc needs a compiler such as clang++", t.text);
      t.cc = value;
    } else if (cpu && (name == "-vector-bytes" || name == "-vector-registers" || name == "-fma-units" || name == "-l1d" ||
                       name == "-l2" || name == "-llc")) {
      overrides.push_back({name, value});
    } else if (t.kind == TargetKind::Cuda && name == "-arch") {
      TESSEL_CHECK(value.rfind("sm_", 0) == 0 && value.size() > 3, "target '{}': -arch needs a GPU architecture such as sm_90",
                   t.text);
      t.arch = value;
    } else if (t.kind == TargetKind::Cuda && name == "-matmul-precision") {
      TESSEL_CHECK(value == "fp32" || value == "tf32", "target '{}': -matmul-precision must be fp32 or tf32, got '{}'", t.text, value);
      t.matmulPrecision = value == "tf32" ? MatmulPrecision::Tf32 : MatmulPrecision::Fp32;
    } else if (t.kind == TargetKind::Opencl && name == "-device") {
      TESSEL_CHECK(!value.empty(), "target '{}': -device needs a device name such as mali", t.text);
      t.device = value;
    } else {
      const char* known = cpu ? "-mcpu=, -mattr=, -mtriple=, -num-cores=, -opt-level=, -cc=, -vector-bytes=, -vector-registers=, "
                                "-fma-units=, -l1d=, -l2=, -llc="
                          : t.kind == TargetKind::Cuda   ? "-arch=, -opt-level=, -matmul-precision="
                          : t.kind == TargetKind::Opencl ? "-device="
                                                         : "none";
      fail("target '{}': unknown option '{}' for a {} target (known: {})", t.text, word, t.kindName(), known);
    }
  }
  if (t.kind == TargetKind::Cuda && t.arch.empty()) t.arch = "sm_90";
  if (t.kind != TargetKind::Cpu) return t;

  t.cpu = cpuMachineOf(t);
  applyAttributes(t, t.cpu);
  if (t.numCores > 0) {
    t.cpu.cores = t.numCores;
    t.cpu.coresFrom = "-num-cores";
  }
  for (const auto& [name, value] : overrides) {
    std::string what = "target '" + t.text + "': " + name;
    if (name == "-vector-bytes") {
      int bytes = parseCount(value, 4, 256, name, t.text);
      TESSEL_CHECK((bytes & (bytes - 1)) == 0, "{} must be a power of two, got {}", what, bytes);
      t.cpu.vectorBytes = bytes;
      t.cpu.featuresFrom += ", vector bytes from the target string";
    } else if (name == "-vector-registers") {
      t.cpu.vectorRegisters = parseCount(value, 4, 128, name, t.text);
      t.cpu.featuresFrom += ", vector registers from the target string";
    } else if (name == "-fma-units") {
      t.cpu.fmaUnits = parseCount(value, 1, 8, name, t.text);
    } else {
      int64_t bytes = parseByteSize(value, what);
      (name == "-l1d" ? t.cpu.l1dBytes : name == "-l2" ? t.cpu.l2Bytes : t.cpu.llcBytes) = bytes;
      t.cpu.cachesFrom += ", " + name.substr(1) + " from the target string";
    }
  }
  return t;
}

}  // namespace tessel::target
