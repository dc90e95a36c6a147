#include "codegen/Nvrtc.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

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

std::string compileCudaToCubin(const std::string& source, const std::string& arch) {
  const auto& lib = loadedNvrtc();
  TESSEL_CHECK(arch.rfind("sm_", 0) == 0, "CUDA architecture '{}' is not of the form sm_NN", arch);
  nvrtcProgram program = nullptr;
  lib.check(lib.createProgram(&program, source.c_str(), "tessel_kernels.cu", 0, nullptr, nullptr), "program creation");
  // Released on every path, errors included.
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> guard(&program, [](nvrtcProgram* p) { nvrtc().destroyProgram(p); });
  std::string archOption = "--gpu-architecture=" + arch;  // a real architecture: NVRTC emits a cubin
  const char* options[] = {archOption.c_str(), "--std=c++17"};
  nvrtcResult compiled = lib.compileProgram(program, 2, options);
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

}  // namespace tessel::codegen
