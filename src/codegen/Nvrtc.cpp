#include "codegen/Nvrtc.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "support/BinaryCache.h"
#include "support/Error.h"

namespace tessel::codegen {

namespace {

// The part of nvrtc.h tessel uses; the ABI is stable across CUDA releases.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct NvrtcLibrary {
  void* handle = nullptr;
  std::string error;  ///< why it could not be loaded
  const char* (*getErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*version)(int*, int*) = nullptr;
  nvrtcResult (*createProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  nvrtcResult (*compileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*getProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*getProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*getCubinSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*getCubin)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*destroyProgram)(nvrtcProgram*) = nullptr;

  NvrtcLibrary() {
    std::vector<std::string> candidates = {"libnvrtc.so"};
    if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
    candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    std::string reasons;
    for (auto& path : candidates) {
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
      reasons += fmt::format("\n  {}: {}", path, dlerror());
    }
    if (!handle) {
      error = "NVRTC (the CUDA toolkit's compiler) not found; install the CUDA toolkit or set CUDA_HOME. Tried:" + reasons;
      return;
    }
    bool ok = bind(getErrorString, "nvrtcGetErrorString") && bind(version, "nvrtcVersion") &&
              bind(createProgram, "nvrtcCreateProgram") && bind(compileProgram, "nvrtcCompileProgram") &&
              bind(getProgramLogSize, "nvrtcGetProgramLogSize") && bind(getProgramLog, "nvrtcGetProgramLog") &&
              bind(getCubinSize, "nvrtcGetCUBINSize") && bind(getCubin, "nvrtcGetCUBIN") &&
              bind(destroyProgram, "nvrtcDestroyProgram");
    if (!ok) handle = nullptr;
  }

  template <class F>
  bool bind(F& function, const char* name) {
    function = reinterpret_cast<F>(dlsym(handle, name));
    if (!function) error = fmt::format("NVRTC library lacks {}", name);
    return function != nullptr;
  }

  void check(nvrtcResult result, const char* what) const {
    TESSEL_CHECK(result == 0, "NVRTC {} failed: {}", what, getErrorString(result));
  }
};

const NvrtcLibrary& nvrtc() {
  static NvrtcLibrary library;  // loaded once, kept for the process
  return library;
}

const NvrtcLibrary& loadedNvrtc() {
  const auto& lib = nvrtc();
  TESSEL_CHECK(lib.handle, "cannot compile CUDA: {}", lib.error);
  return lib;
}

std::string firstLines(const std::string& text, int count) {
  std::istringstream in(text);
  std::string line, out;
  for (int n = 1; n <= count && std::getline(in, line); ++n) out += fmt::format("{:4} | {}\n", n, line);
  return out;
}

}  // namespace

bool nvrtcAvailable(std::string* why) {
  const auto& lib = nvrtc();
  if (!lib.handle && why) *why = lib.error;
  return lib.handle != nullptr;
}

std::string nvrtcVersion() {
  const auto& lib = loadedNvrtc();
  int major = 0, minor = 0;
  lib.check(lib.version(&major, &minor), "version query");
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> nvrtcOptionsOf(const target::Target& target) {
  TESSEL_CHECK(target.kind == target::TargetKind::Cuda, "target '{}' is not a CUDA target", target.str());
  // A real architecture: NVRTC emits a cubin.
  std::vector<std::string> options = {"--gpu-architecture=" + target.arch, "--std=c++17"};
  if (target.optLevel == 0) options.push_back("--Ofast-compile=mid");
  if (target.optLevel == 1) options.push_back("--Ofast-compile=min");
  return options;
}

namespace {

std::string compileWithNvrtc(const std::string& source, const std::vector<std::string>& optionTexts, const std::string& arch) {
  const auto& lib = loadedNvrtc();
  nvrtcProgram program = nullptr;
  lib.check(lib.createProgram(&program, source.c_str(), "tessel_kernels.cu", 0, nullptr, nullptr), "program creation");
  // Released on every path, errors included.
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(&program, [](nvrtcProgram* p) { nvrtc().destroyProgram(p); });
  std::vector<const char*> options;
  for (auto& o : optionTexts) options.push_back(o.c_str());
  nvrtcResult compiled = lib.compileProgram(program, int(options.size()), options.data());
  size_t logSize = 0;
  lib.check(lib.getProgramLogSize(program, &logSize), "log query");
  std::string log(logSize, '\0');
  if (logSize > 0) lib.check(lib.getProgramLog(program, log.data()), "log query");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  TESSEL_CHECK(compiled == 0, "NVRTC could not compile the CUDA kernels for {} ({}):\n{}\nsource begins:\n{}", arch,
               lib.getErrorString(compiled), log, firstLines(source, 40));
  size_t size = 0;
  lib.check(lib.getCubinSize(program, &size), "cubin query");
  std::string cubin(size, '\0');
  lib.check(lib.getCubin(program, cubin.data()), "cubin query");
  return cubin;
}

/// Whether a cached cubin is whole: an ELF64 file whose program and section header tables lie
/// inside it (a cut-short entry is compiled again rather than refused by the driver at load).
bool wholeCubin(const std::string& cubin) {
  auto field = [&](size_t offset, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) value |= uint64_t(uint8_t(cubin[offset + i])) << (8 * i);  // little-endian
    return value;
  };
  if (cubin.size() < 64 || cubin.compare(0, 4, "\x7f" "ELF") != 0 || cubin[4] != 2 || cubin[5] != 1) return false;
  uint64_t programHeadersEnd = field(0x20, 8) + field(0x36, 2) * field(0x38, 2);
  uint64_t sectionHeadersEnd = field(0x28, 8) + field(0x3A, 2) * field(0x3C, 2);
  return programHeadersEnd <= cubin.size() && sectionHeadersEnd <= cubin.size();
}

}  // namespace

std::string compileCudaToCubin(const std::string& source, const target::Target& target, CubinCache cache) {
  std::vector<std::string> options = nvrtcOptionsOf(target);
  std::string directory = cache == CubinCache::kUse ? binaryCacheDirectory("TESSEL_CUDA_CACHE", "cuda") : "";
  std::string cached;
  if (!directory.empty()) {
    std::string joined;
    for (auto& o : options) joined += o + '\n';
    std::string version = nvrtcVersion();
    cached = binaryCachePath(directory, {source, joined, version}, ".cubin");
    if (auto cubin = readCachedBinary(cached); cubin && wholeCubin(*cubin)) return *cubin;
  }
  std::string cubin = compileWithNvrtc(source, options, target.arch);
  if (!cached.empty()) storeCachedBinary(cached, cubin);
  return cubin;
}

}  // namespace tessel::codegen
