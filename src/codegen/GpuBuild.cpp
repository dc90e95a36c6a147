#include "codegen/GpuBuild.h"

#include <filesystem>
#include <sstream>

#include "codegen/Nvrtc.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/GpuModuleFormat.h"

namespace tessel::codegen {

namespace {

/// The first word of a target string: its kind.
std::string targetKindWord(const std::string& target) {
  std::istringstream words(target);
  std::string kind;
  words >> kind;
  return kind;
}

}  // namespace

bool isGpuTarget(const std::string& target) {
  std::string kind = targetKindWord(target);
  return kind == "cuda" || kind == "opencl";
}

GpuDialect gpuDialectOfTarget(const std::string& target) {
  std::string kind = targetKindWord(target);
  if (kind == "cuda") return GpuDialect::Cuda;
  if (kind == "opencl") return GpuDialect::OpenCL;
  fail("target '{}' is not a GPU target (expected 'cuda ...' or 'opencl ...')", target);
}

GpuBinary buildGpuKernels(const std::vector<passes::GpuLoweredFunction>& kernels, const std::string& target) {
  GpuDialect dialect = gpuDialectOfTarget(target);
  GpuBinary binary{generateGpuSource(kernels, dialect), {}};
  binary.code = dialect == GpuDialect::Cuda ? compileCudaToCubin(binary.source.code, cudaArchOfTarget(target)) : binary.source.code;
  return binary;
}

void saveGpuModule(const GpuBinary& binary, const std::string& directory) {
  namespace fs = std::filesystem;
  fs::create_directories(directory);
  bool cuda = binary.source.dialect == GpuDialect::Cuda;
  writeFile((fs::path(directory) / kGpuManifestFile).string(), binary.source.manifest.dump(2) + "\n");
  writeFile((fs::path(directory) / (cuda ? kCudaCodeFile : kOpenclCodeFile)).string(), binary.code);
  if (cuda) writeFile((fs::path(directory) / kCudaSourceFile).string(), binary.source.code);
}

}  // namespace tessel::codegen
