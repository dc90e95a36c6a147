/// The OpenCL program binary cache: a module keeps its kernels as OpenCL C, which the driver
/// compiles when the module loads (seconds on a phone's GPU, for every run of a program). The
/// binary the driver made is kept on disk and given back to it the next time, keyed by
/// everything that could change it: the source, the build options, and the device's name,
/// OpenCL version and driver version. The cache is an optimization only: an unreadable,
/// stale or rejected binary means a build from source, and a cache that cannot be written
/// means no cache; neither is an error of the load.
///
/// Where: $TESSEL_OPENCL_CACHE (a directory; "off" turns caching off), else
/// $XDG_CACHE_HOME/tessel/opencl, else $HOME/.cache/tessel/opencl.
#pragma once
#include <optional>
#include <string>

namespace tessel::runtime::opencl {

/// The cache directory by the rules above; empty when caching is off or no directory is known.
std::string programCacheDirectory();

/// What identifies a binary: the program and the device that built it.
struct ProgramIdentity {
  std::string source;
  std::string buildOptions;
  std::string deviceName, deviceVersion, driverVersion;
};

/// The cache file of a program in `directory` (a hash of its identity, ".bin").
std::string programCachePath(const std::string& directory, const ProgramIdentity& identity);

/// The cached binary, if the file is there and readable.
std::optional<std::string> readCachedBinary(const std::string& path);

/// Stores a binary (written beside it and renamed into place, so that a reader never sees
/// half a file); returns false when it could not.
bool storeCachedBinary(const std::string& path, const std::string& binary);

}  // namespace tessel::runtime::opencl
