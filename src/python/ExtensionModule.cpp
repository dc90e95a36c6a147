// The `_tessel` extension module: each part adds its bindings (Bindings.h); the pure-Python
// package `tessel` (tessel/) arranges them under TVM's names.
#include <dlfcn.h>

#include "python/Bindings.h"

namespace {

/// The kernels of a module are C++ built without a DT_NEEDED on libstdc++ (codegen/Toolchain:
/// every program that loads them is C++, so its symbols, __gxx_personality_v0 among them, are
/// in the global scope). Python is C: the extension brings libstdc++ in, but in its own local
/// scope, so it is made global here, before any module is loaded.
void makeStdCxxGlobal() {
  if (!dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
    throw pybind11::import_error(std::string("tessel: cannot make libstdc++ visible to compiled modules: ") + dlerror());
}

}  // namespace

PYBIND11_MODULE(_tessel, m) {
  m.doc() = "tessel's native bindings; import the `tessel` package instead";
  makeStdCxxGlobal();
  tessel::python::bindErrors(m);
  tessel::python::bindModels(m);
  tessel::python::bindBuild(m);
  tessel::python::bindRuntime(m);
  tessel::python::bindTuning(m);
  tessel::python::bindRecords(m);
}
