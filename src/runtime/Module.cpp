#include "runtime/Module.h"
#include "runtime/ElfCheck.h"
#include "target/CpuRequirements.h"
#include "target/HostCpu.h"
#include "target/KnownCpus.h"
#include "runtime/Threading.h"

#include <dlfcn.h>

#include <filesystem>
#include <set>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Json.h"

namespace tessel::runtime {

namespace detail {

/// The dlopen handle and what the manifest says; closed when the last Module/Kernel goes.
struct LoadedLibrary {
  std::string path;
  void* handle = nullptr;
  std::string manifestText;
  std::vector<KernelSpec> kernels;
  std::vector<TesselKernel> functions;

  LoadedLibrary() = default;
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;
  ~LoadedLibrary() {
    if (handle) dlclose(handle);
  }
};

}  // namespace detail

namespace {

using nlohmann::json;

std::string dlerrorText() {
  const char* message = dlerror();
  return message ? message : "unknown dlopen error";
}

/// Parses "cpu" (any id) or "cuda:1" (that id) into the kernel spec's device fields.
void parseKernelDevice(const std::string& text, KernelSpec& spec) {
  spec.device = Device::parse(text);
  spec.anyDeviceId = text.find(':') == std::string::npos;
}

}  // namespace

std::vector<KernelSpec> parseKernelManifest(const std::string& text) {
  json doc = parseJson(text, "");
  TESSEL_CHECK(doc.is_object(), "expected a JSON object at the top");
  KernelSpec defaults;
  defaults.device = Device::cpu();
  if (doc.contains("device")) {
    TESSEL_CHECK(doc["device"].is_string(), "'device' must be a string");
    parseKernelDevice(doc["device"].get<std::string>(), defaults);
  }
  TESSEL_CHECK(doc.contains("kernels") && doc["kernels"].is_array(), "expected a 'kernels' array");
  std::vector<KernelSpec> kernels;
  std::set<std::string> seen;
  for (size_t k = 0; k < doc["kernels"].size(); ++k) {
    const json& entry = doc["kernels"][k];
    std::string where = fmt::format("kernel {}", k + 1);
    TESSEL_CHECK(entry.is_object(), "{}: expected an object", where);
    TESSEL_CHECK(entry.contains("name") && entry["name"].is_string() && !entry["name"].get<std::string>().empty(),
                 "{}: expected a non-empty string 'name'", where);
    KernelSpec spec = defaults;
    spec.name = entry["name"].get<std::string>();
    where = fmt::format("kernel '{}'", spec.name);
    TESSEL_CHECK(seen.insert(spec.name).second, "{} is listed twice", where);
    spec.symbol = spec.name;
    if (entry.contains("symbol")) {
      TESSEL_CHECK(entry["symbol"].is_string(), "{}: 'symbol' must be a string", where);
      spec.symbol = entry["symbol"].get<std::string>();
    }
    if (entry.contains("device")) {
      TESSEL_CHECK(entry["device"].is_string(), "{}: 'device' must be a string", where);
      parseKernelDevice(entry["device"].get<std::string>(), spec);
    }
    TESSEL_CHECK(entry.contains("args") && entry["args"].is_array(), "{}: expected an 'args' array", where);
    for (size_t a = 0; a < entry["args"].size(); ++a) {
      const json& arg = entry["args"][a];
      std::string argWhere = fmt::format("{}, argument {}", where, a + 1);
      TESSEL_CHECK(arg.is_object(), "{}: expected an object", argWhere);
      ArgSpec argSpec;
      TESSEL_CHECK(arg.contains("name") && arg["name"].is_string(), "{}: expected a string 'name'", argWhere);
      argSpec.name = arg["name"].get<std::string>();
      argWhere = fmt::format("{}, argument '{}'", where, argSpec.name);
      TESSEL_CHECK(arg.contains("dtype") && arg["dtype"].is_string(), "{}: expected a string 'dtype'", argWhere);
      try {
        argSpec.dtype = DataType::parse(arg["dtype"].get<std::string>());
      } catch (const Error& e) {
        throw e.withContext(argWhere);
      }
      TESSEL_CHECK(arg.contains("shape") && arg["shape"].is_array(), "{}: expected a 'shape' array", argWhere);
      for (const json& extent : arg["shape"]) {
        TESSEL_CHECK(extent.is_number_integer() && extent.get<int64_t>() >= -1,
                     "{}: shape extents must be integers >= -1, got {}", argWhere, jsonEcho(extent));
        argSpec.shape.push_back(extent.get<int64_t>());
      }
      spec.args.push_back(std::move(argSpec));
    }
    if (entry.contains("outputs"))
      spec.numOutputs = int(jsonInteger(entry["outputs"], where + ", 'outputs'", 0, int64_t(spec.args.size())));
    kernels.push_back(std::move(spec));
  }
  return kernels;
}

namespace {

std::string expectedShapeText(const std::vector<int64_t>& shape) {
  std::vector<std::string> parts;
  for (int64_t extent : shape) parts.push_back(extent < 0 ? "?" : std::to_string(extent));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

[[noreturn]] void throwKernelFailure(const std::string& kernelName, int32_t code, char* error, size_t capacity) {
  error[capacity - 1] = '\0';
  if (error[0] == '\0') fail("kernel '{}' failed with code {} (no message)", kernelName, code);
  fail("kernel '{}' failed: {}", kernelName, error);
}

constexpr int32_t kErrorCapacity = 1024;

}  // namespace

// ---- Kernel ---------------------------------------------------------------------------------

Kernel::Kernel(std::shared_ptr<const detail::LoadedLibrary> library, size_t index)
    : library_(std::move(library)), index_(index), function_(library_->functions[index]) {}

const KernelSpec& Kernel::spec() const {
  TESSEL_CHECK(library_ != nullptr, "use of an undefined kernel");
  return library_->kernels[index_];
}
const std::string& Kernel::name() const { return spec().name; }
const std::vector<ArgSpec>& Kernel::argSpecs() const { return spec().args; }

void checkKernelArguments(const KernelSpec& s, const std::vector<Tensor>& args) {
  TESSEL_CHECK(args.size() == s.args.size(), "kernel '{}': expected {} argument{}, got {}", s.name, s.args.size(),
               s.args.size() == 1 ? "" : "s", args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& expected = s.args[i];
    const Tensor& got = args[i];
    std::string where = fmt::format("kernel '{}', argument '{}' ({} of {})", s.name, expected.name, i + 1, args.size());
    TESSEL_CHECK(got.defined(), "{}: the tensor is undefined", where);
    Device device = got.device();
    if (s.anyDeviceId) {
      TESSEL_CHECK(device.kind == s.device.kind, "{}: expected device {}, got {}", where, deviceKindName(s.device.kind),
                   device.str());
      TESSEL_CHECK(device == args[0].device(), "{}: expected device {} (the device of argument '{}'), got {}", where,
                   args[0].device().str(), s.args[0].name, device.str());
    } else {
      TESSEL_CHECK(device == s.device, "{}: expected device {}, got {}", where, s.device.str(), device.str());
    }
    TESSEL_CHECK(got.dtype() == expected.dtype, "{}: expected dtype {}, got {}", where, expected.dtype.str(),
                 got.dtype().str());
    TESSEL_CHECK(got.ndim() == int(expected.shape.size()), "{}: expected rank {} (shape {}), got rank {} (shape {})",
                 where, expected.shape.size(), expectedShapeText(expected.shape), got.ndim(), formatShape(got.shape()));
    for (size_t d = 0; d < expected.shape.size(); ++d) {
      if (expected.shape[d] >= 0 && expected.shape[d] != got.shape()[d])
        fail("{}: expected shape {}, got {}", where, expectedShapeText(expected.shape), formatShape(got.shape()));
    }
  }
}

void Kernel::checkArguments(const std::vector<Tensor>& args) const { checkKernelArguments(spec(), args); }

void Kernel::callPacked(const TesselTensor* args, int numArgs) const {
  TESSEL_CHECK(library_ != nullptr, "use of an undefined kernel");
  char error[kErrorCapacity];
  error[0] = '\0';
  int32_t code = function_(args, numArgs, error, kErrorCapacity);
  if (code != 0) throwKernelFailure(name(), code, error, kErrorCapacity);
}

void Kernel::call(const std::vector<Tensor>& args) const {
  checkArguments(args);
  std::vector<TesselTensor> packed;
  packed.reserve(args.size());
  for (const Tensor& t : args) packed.push_back(t.abi());
  callPacked(packed.data(), int(packed.size()));
}

std::function<void()> Kernel::bind(const std::vector<Tensor>& args) const {
  checkArguments(args);
  struct Bound {
    Kernel kernel;
    std::vector<Tensor> tensors;  // keeps the storage (and the shape arrays) alive
    std::vector<TesselTensor> packed;
  };
  auto bound = std::make_shared<Bound>(Bound{*this, args, {}});
  for (const Tensor& t : bound->tensors) bound->packed.push_back(t.abi());
  return [bound] { bound->kernel.callPacked(bound->packed.data(), int(bound->packed.size())); };
}

// ---- Module ---------------------------------------------------------------------------------

namespace {

/// Refuses a library whose kernels need what this CPU lacks, before any of its code runs (its
/// requirements are data, read with dlsym): the alternative is SIGILL in the first kernel.
void checkCpuRequirements(const detail::LoadedLibrary& library) {
  dlerror();
  auto* text = static_cast<const char*>(dlsym(library.handle, TESSEL_MODULE_REQUIRES_SYMBOL));
  if (!text || !*text) return;  // compiled without a target: nothing recorded
  auto required = target::CpuRequirements::parse(text, fmt::format("module '{}'", library.path));
  const target::CpuMachine& host = target::hostCpu();
  auto missing = required.missingOn(host.arch, host.features);
  if (missing.empty()) return;
  fail("cannot load module '{}': it was compiled for {} and this CPU ({}, {}) lacks {}; compile it for this machine "
       "(--target cpu) or for a CPU it has (--target \"cpu -mcpu={}\")",
       library.path, required.isaClass, host.name, host.isaClass(), fmt::join(missing, ", "),
       host.isa() == target::IsaClass::X86_64Avx512 ? "x86-64-v4"
       : host.isa() == target::IsaClass::X86_64Avx2 ? "x86-64-v3"
                                                    : target::baselineCpuName(host.arch));
}

}  // namespace

Module Module::load(const std::string& sharedLibraryPath) {
  std::string path = sharedLibraryPath;
  // dlopen searches the library path for a bare name; we mean a file.
  if (path.find('/') == std::string::npos) path = "./" + path;
  std::error_code ec;
  TESSEL_CHECK(std::filesystem::exists(path, ec), "cannot load module '{}': no such file", sharedLibraryPath);
  checkLoadableElf(path);

  // The process, not the kernel library, must own the OpenMP runtime (see Threading.h).
  (void)kernelThreadCount();
  auto library = std::make_shared<detail::LoadedLibrary>();
  library->path = sharedLibraryPath;
  dlerror();
  library->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library->handle) fail("cannot load module '{}': {}", sharedLibraryPath, dlerrorText());

  checkCpuRequirements(*library);

  dlerror();
  void* manifestSymbol = dlsym(library->handle, TESSEL_MODULE_MANIFEST_SYMBOL);
  if (!manifestSymbol)
    fail("cannot load module '{}': not a tessel module (it does not export '{}')", sharedLibraryPath,
         TESSEL_MODULE_MANIFEST_SYMBOL);
  auto manifestFunction = reinterpret_cast<TesselManifestFn>(manifestSymbol);
  const char* manifest = manifestFunction();
  TESSEL_CHECK(manifest != nullptr, "cannot load module '{}': its manifest function returned NULL", sharedLibraryPath);
  library->manifestText = manifest;
  try {
    library->kernels = parseKernelManifest(library->manifestText);
  } catch (const Error& e) {
    throw e.withContext(fmt::format("cannot load module '{}': invalid manifest", sharedLibraryPath));
  }
  for (const KernelSpec& spec : library->kernels) {
    dlerror();
    void* symbol = dlsym(library->handle, spec.symbol.c_str());
    if (!symbol)
      fail("cannot load module '{}': kernel '{}' is listed in the manifest but the library does not export '{}'",
           sharedLibraryPath, spec.name, spec.symbol);
    library->functions.push_back(reinterpret_cast<TesselKernel>(symbol));
  }
  Module module;
  module.library_ = std::move(library);
  return module;
}

const std::string& Module::path() const {
  TESSEL_CHECK(library_ != nullptr, "use of an unloaded module");
  return library_->path;
}

const std::string& Module::manifestText() const {
  TESSEL_CHECK(library_ != nullptr, "use of an unloaded module");
  return library_->manifestText;
}

std::vector<std::string> Module::kernelNames() const {
  TESSEL_CHECK(library_ != nullptr, "use of an unloaded module");
  std::vector<std::string> names;
  for (const KernelSpec& spec : library_->kernels) names.push_back(spec.name);
  return names;
}

bool Module::hasKernel(const std::string& name) const {
  TESSEL_CHECK(library_ != nullptr, "use of an unloaded module");
  for (const KernelSpec& spec : library_->kernels)
    if (spec.name == name) return true;
  return false;
}

Kernel Module::kernel(const std::string& name) const {
  TESSEL_CHECK(library_ != nullptr, "use of an unloaded module");
  for (size_t i = 0; i < library_->kernels.size(); ++i)
    if (library_->kernels[i].name == name) return Kernel(library_, i);
  auto names = kernelNames();
  fail("module '{}' has no kernel '{}'; available: {}", library_->path, name,
       names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", ")));
}

}  // namespace tessel::runtime
