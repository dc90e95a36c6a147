#include "runtime/GpuModule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "runtime/GpuCode.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/Json.h"

namespace tessel::runtime {

namespace detail {

struct LoadedGpuModule {
  Device device;
  std::vector<KernelSpec> kernels;
  std::vector<GpuLaunchDims> launches;
  std::shared_ptr<const LoadedGpuCode> code;
};

}  // namespace detail

namespace {

GpuLaunchDims parseLaunch(const nlohmann::json& entry, const std::string& where) {
  TESSEL_CHECK(entry.contains("launch") && entry["launch"].is_object(), "{}: expected a 'launch' object (a GPU kernel)", where);
  const auto& launch = entry["launch"];
  GpuLaunchDims dims;
  for (const char* key : {"grid", "block"}) {
    std::string keyWhere = fmt::format("{}, launch '{}'", where, key);
    TESSEL_CHECK(launch.contains(key), "{}: missing", keyWhere);
    auto values = jsonIntegers(launch[key], keyWhere, 1, int64_t(1) << 31);
    TESSEL_CHECK(values.size() == 3, "{}: expected 3 dimensions, got {}", keyWhere, values.size());
    auto& out = std::string(key) == "grid" ? dims.grid : dims.block;
    for (size_t d = 0; d < 3; ++d) out[d] = values[d];
  }
  if (launch.contains("shared_bytes")) dims.sharedBytes = jsonInteger(launch["shared_bytes"], where + ", launch 'shared_bytes'", 0);
  if (launch.contains("dynamic_shared")) {
    TESSEL_CHECK(launch["dynamic_shared"].is_boolean(), "{}, launch 'dynamic_shared': expected true or false", where);
    dims.dynamicShared = launch["dynamic_shared"].get<bool>();
  }
  return dims;
}

}  // namespace

GpuModule GpuModule::fromMemory(const std::string& manifestText, const std::string& code, int deviceId) {
  return make(manifestText, code, deviceId, false);
}

GpuModule GpuModule::make(const std::string& manifestText, const std::string& code, int deviceId, bool cacheOpenclBinary) {
  auto module = std::make_shared<detail::LoadedGpuModule>();
  try {
    module->kernels = parseKernelManifest(manifestText);
  } catch (const Error& e) {
    throw e.withContext("GPU module manifest");
  }
  nlohmann::json doc = parseJson(manifestText, "GPU module manifest");
  TESSEL_CHECK(!module->kernels.empty(), "GPU module manifest: no kernels");
  DeviceKind kind = module->kernels[0].device.kind;
  TESSEL_CHECK(kind == DeviceKind::CUDA || kind == DeviceKind::OpenCL,
               "GPU module manifest: device '{}' is not a GPU (expected cuda or opencl)", deviceKindName(kind));
  module->device = Device{kind, deviceId};
  std::vector<std::string> names;
  for (size_t k = 0; k < module->kernels.size(); ++k) {
    KernelSpec& spec = module->kernels[k];
    std::string where = fmt::format("GPU module manifest, kernel '{}'", spec.name);
    TESSEL_CHECK(spec.device.kind == kind, "{}: device {} differs from the module's {}", where, deviceKindName(spec.device.kind),
                 deviceKindName(kind));
    spec.device = module->device;  // the arguments must live where the code was loaded
    spec.anyDeviceId = false;
    module->launches.push_back(parseLaunch(doc["kernels"][k], where));
    TESSEL_CHECK(kind == DeviceKind::CUDA || !module->launches.back().dynamicShared,
                 "{}: dynamic shared memory is a CUDA kernel's, not an OpenCL one's", where);
    names.push_back(spec.symbol);
  }
  module->code = kind == DeviceKind::CUDA ? detail::loadCudaCode(deviceId, code, names, module->launches) : detail::loadOpenclCode(deviceId, code, names, cacheOpenclBinary);
  GpuModule result;
  result.module_ = std::move(module);
  return result;
}

GpuModule GpuModule::load(const std::string& directory, int deviceId) {
  namespace fs = std::filesystem;
  std::string manifestPath = (fs::path(directory) / kGpuManifestFile).string();
  std::string manifest = readFile(manifestPath, file_kinds::kJson);
  nlohmann::json doc = parseJson(manifest, manifestPath);
  std::string device = doc.is_object() && doc.contains("device") && doc["device"].is_string() ? doc["device"].get<std::string>() : "";
  std::string codeFile = device.rfind("cuda", 0) == 0 ? kCudaCodeFile : kOpenclCodeFile;
  TESSEL_CHECK(device.rfind("cuda", 0) == 0 || device.rfind("opencl", 0) == 0,
               "{}: 'device' must be \"cuda\" or \"opencl\" in a GPU module", manifestPath);
  std::string code = readFile((fs::path(directory) / codeFile).string(), FileKind{"GPU kernel code", uint64_t(1) << 30});
  try {
    return make(manifest, code, deviceId, true);
  } catch (const Error& e) {
    throw e.withContext(directory);
  }
}

Device GpuModule::device() const { return module_->device; }

std::vector<std::string> GpuModule::kernelNames() const {
  std::vector<std::string> names;
  for (auto& k : module_->kernels) names.push_back(k.name);
  return names;
}

GpuKernel GpuModule::kernel(const std::string& name) const {
  for (size_t k = 0; k < module_->kernels.size(); ++k)
    if (module_->kernels[k].name == name) return GpuKernel(module_, k);
  fail("GPU module has no kernel '{}' (kernels: {})", name, fmt::join(kernelNames(), ", "));
}

const std::string& GpuKernel::name() const { return spec().name; }
const KernelSpec& GpuKernel::spec() const {
  TESSEL_CHECK(module_ != nullptr, "use of an undefined GPU kernel");
  return module_->kernels[index_];
}
const GpuLaunchDims& GpuKernel::launch() const {
  TESSEL_CHECK(module_ != nullptr, "use of an undefined GPU kernel");
  return module_->launches[index_];
}

void GpuKernel::launchPacked(const TesselTensor* args, int numArgs) const {
  std::vector<void*> buffers;
  buffers.reserve(size_t(numArgs));
  for (int i = 0; i < numArgs; ++i) buffers.push_back(args[i].data);
  launchBuffers(buffers);
}

void GpuKernel::launchUnchecked(const std::vector<Tensor>& args) const {
  std::vector<void*> buffers;
  buffers.reserve(args.size());
  for (auto& t : args) buffers.push_back(t.data());
  launchBuffers(buffers);
}

void GpuKernel::launchBuffers(const std::vector<void*>& buffers) const {
  try {
    module_->code->launch(index_, buffers, module_->launches[index_]);
  } catch (const Error& e) {
    throw e.withContext(fmt::format("kernel '{}'", name()));
  }
}

void GpuKernel::call(const std::vector<Tensor>& args) const {
  checkKernelArguments(spec(), args);
  launchUnchecked(args);
}

std::function<void()> GpuKernel::bind(const std::vector<Tensor>& args) const {
  checkKernelArguments(spec(), args);
  return [kernel = *this, args] { kernel.launchUnchecked(args); };
}

}  // namespace tessel::runtime
