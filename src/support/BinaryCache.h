/// A directory of compiled binaries, each kept under a hash of everything that made it (the
/// source, the compiler's options and version, the device): the OpenCL driver's program
/// binaries and NVRTC's cubins. A build a user repeats (the same network, the same records)
/// takes the binary from the cache instead of compiling again. The cache is an optimization
/// only: a missing, unreadable or damaged entry means a compile, and a directory that cannot be
/// written means no cache; neither is an error.
///
/// Where: $<the kind's variable> (a directory; "off" turns caching off), else
/// $XDG_CACHE_HOME/tessel/<kind>, else $HOME/.cache/tessel/<kind>.
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

/// Whether a cache without the user's own directory falls back to the default location: not
/// beside a compiler that keeps its own cache of the same builds (runtime/OpenclCode: PoCL).
enum class DefaultCacheLocation { kUse, kSkip };

/// The cache directory of one kind of binary ("opencl", "cuda") by the rules above, the
/// variable naming the user's own directory (TESSEL_OPENCL_CACHE); empty when caching is off, or
/// when the variable is unset and `location` is kSkip, or when no directory is known.
std::string binaryCacheDirectory(const char* variable, std::string_view kind,
                                 DefaultCacheLocation location = DefaultCacheLocation::kUse);

/// The file of an entry in `directory`: a hash of the identity's parts (every part counts, and
/// no two lists of parts give the same bytes to hash), with the extension (".bin").
std::string binaryCachePath(const std::string& directory, std::initializer_list<std::string_view> identity,
                            std::string_view extension);

/// The cached binary, if the file is there, readable and not empty (an unreadable entry is
/// compiled again and replaced).
std::optional<std::string> readCachedBinary(const std::string& path);

/// Stores a binary (written beside it and renamed into place, so that a reader never sees half
/// a file); returns false when it could not.
bool storeCachedBinary(const std::string& path, const std::string& binary);

}  // namespace tessel
