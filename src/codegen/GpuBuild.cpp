#include "codegen/GpuBuild.h"

#include <filesystem>

#include "codegen/Nvrtc.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/GpuModuleFormat.h"

namespace tessel::codegen {

GpuDialect gpuDialectOfTarget(const target::Target& target) {
  if (target.kind == target::TargetKind::Cuda) return GpuDialect::Cuda;
  if (target.kind == target::TargetKind::Opencl) return GpuDialect::OpenCL;
  fail("target '{}' is not a GPU target (expected 'cuda ...' or 'opencl ...')", target.str());
}

GpuBinary buildGpuKernels(const std::vector<passes::GpuLoweredFunction>& kernels, const target::Target& target) {
  GpuDialect dialect = gpuDialectOfTarget(target);
  GpuBinary binary{generateGpuSource(kernels, dialect), {}};
  binary.code = dialect == GpuDialect::Cuda ? compileCudaToCubin(binary.source.code, target, CubinCache::kUse) : binary.source.code;
  return binary;
}

void saveGpuModule(const GpuBinary& binary, const std::string& directory) {
  namespace fs = std::filesystem;
  fs::create_directories(directory);
  bool cuda = binary.source.dialect == GpuDialect::Cuda;
  // The directory is synced as a whole by whoever makes it complete (a module's AtomicDirectory).
  constexpr SyncToDisk kNo = SyncToDisk::kNo;
  writeFile((fs::path(directory) / kGpuManifestFile).string(), binary.source.manifest.dump(2) + "\n", kNo);
  writeFile((fs::path(directory) / (cuda ? kCudaCodeFile : kOpenclCodeFile)).string(), binary.code, kNo);
  if (cuda) writeFile((fs::path(directory) / kCudaSourceFile).string(), binary.source.code, kNo);
}

}  // namespace tessel::codegen
