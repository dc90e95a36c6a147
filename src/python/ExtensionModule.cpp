// The `_tessel` extension module: each part adds its bindings (Bindings.h); the pure-Python
// package `tessel` (tessel/) arranges them under TVM's names.
#include <dlfcn.h>

#include <filesystem>

#include "python/Bindings.h"
#include "support/HelperPrograms.h"

namespace {

/// The kernels of a module are C++ built without a DT_NEEDED on libstdc++ (codegen/Toolchain:
/// every program that loads them is C++, so its symbols, __gxx_personality_v0 among them, are
/// in the global scope). Python is C: the extension brings libstdc++ in, but in its own local
/// scope, so it is made global here, before any module is loaded.
void makeStdCxxGlobal() {
  if (!dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
    throw pybind11::import_error(std::string("tessel: cannot make libstdc++ visible to compiled modules: ") + dlerror());
}

/// An installed package finds the workers tuning starts (tessel-measure-worker) in the programs'
/// directory of its prefix, relative to the extension's own file, so that a moved prefix works:
/// python3's directory, where the lookup looks first, holds none. From the build tree, the
/// lookup finds the build's own workers.
void useInstalledPrograms() {
  if (tessel::runningFromBuildTree()) return;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void*>(&useInstalledPrograms), &info) || !info.dli_fname) return;
  // Python dlopens the extension by the path it found on sys.path, which may be relative to the
  // working directory: the one it still is while the module initializes.
  std::filesystem::path package = std::filesystem::absolute(info.dli_fname).parent_path();
  tessel::setProgramDirectory((package / TESSEL_PACKAGE_TO_PROGRAMS).lexically_normal().string());
}

}  // namespace

PYBIND11_MODULE(_tessel, m) {
  m.doc() = "tessel's native bindings; import the `tessel` package instead";
  makeStdCxxGlobal();
  useInstalledPrograms();
  tessel::python::bindErrors(m);
  tessel::python::bindModels(m);
  tessel::python::bindBuild(m);
  tessel::python::bindRuntime(m);
  tessel::python::bindTuning(m);
  tessel::python::bindAutoScheduler(m);
  tessel::python::bindRecords(m);
}
