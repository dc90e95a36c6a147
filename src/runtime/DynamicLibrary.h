/// A vendor library opened with dlopen and kept for the process, its functions bound by name:
/// how the runtime reaches the GPU drivers (libcuda.so.1, libOpenCL.so.1) without linking them,
/// so that one build serves machines with and without them. Internal to the runtime.
#pragma once
#include <dlfcn.h>
#include <link.h>

#include <string>

namespace tessel::runtime::detail {

class DynamicLibrary {
 public:
  /// Opens `name` (never closed: device memory and modules outlive any one user of it).
  explicit DynamicLibrary(std::string name) : name_(std::move(name)) {
    handle_ = dlopen(name_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* message = dlerror();
      openError_ = message ? message : "?";
    }
  }

  bool opened() const { return handle_ != nullptr; }
  /// dlerror's message when opening failed.
  const std::string& openError() const { return openError_; }

  /// Binds `function` to `symbol`; a missing one sets missing() to "<name> lacks <symbol>
  /// <hint>" (the first only) and returns false.
  template <class F>
  bool bind(F& function, const char* symbol, const char* hint = "") {
    if (bindOptional(function, symbol)) return true;
    if (missing_.empty()) missing_ = name_ + " lacks " + symbol + hint;
    return false;
  }
  /// The same for a symbol the caller can do without (an older or newer name of a function).
  template <class F>
  bool bindOptional(F& function, const char* symbol) {
    function = handle_ ? reinterpret_cast<F>(dlsym(handle_, symbol)) : nullptr;
    return function != nullptr;
  }
  /// The file the library was loaded from (dlinfo's link map), or its name when unknown.
  std::string path() const {
    struct link_map* map = nullptr;
    if (handle_ && dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) return map->l_name;
    return name_;
  }
  /// The first symbol bind() did not find, as a message; empty when all were found.
  const std::string& missing() const { return missing_; }

 private:
  std::string name_;
  void* handle_ = nullptr;
  std::string openError_, missing_;
};

}  // namespace tessel::runtime::detail
