#include "support/BinaryCache.h"

#include <cstdlib>
#include <filesystem>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Hash.h"

namespace tessel {

namespace fs = std::filesystem;

std::string binaryCacheDirectory(const char* variable, std::string_view kind, DefaultCacheLocation location) {
  if (const char* own = std::getenv(variable); own && *own) return std::string(own) == "off" ? "" : own;
  if (location == DefaultCacheLocation::kSkip) return "";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/tessel/" + std::string(kind);
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/tessel/" + std::string(kind);
  return "";
}

std::string binaryCachePath(const std::string& directory, std::initializer_list<std::string_view> identity,
                            std::string_view extension) {
  StableHasher h;
  // Lengths first: no two identities run into the same byte stream.
  for (std::string_view part : identity) h.add(int64_t(part.size())).add(part);
  return (fs::path(directory) / (h.hex() + std::string(extension))).string();
}

std::optional<std::string> readCachedBinary(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    std::string binary = readFile(path, FileKind{"cached binary", uint64_t(1) << 30});
    if (!binary.empty()) return binary;
  } catch (const Error&) {
    // unreadable: the binary is compiled again, and the entry replaced
  }
  return std::nullopt;
}

bool storeCachedBinary(const std::string& path, const std::string& binary) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return false;
  // Whole or not at all: two programs storing the same binary at once each rename a whole file
  // of their own. A cache entry need not survive a crash: no sync.
  try {
    writeFile(path, binary, SyncToDisk::kNo);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace tessel
