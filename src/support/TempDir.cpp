#include "support/TempDir.h"

#include <stdlib.h>
#include <string.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/Error.h"

namespace tessel {

TempDir::TempDir(const std::string& prefix) {
  const char* base = getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  cleanup_ = CleanupOnSignal::creating([&] {
    std::string buffer = pattern;
    TESSEL_CHECK(mkdtemp(buffer.data()) != nullptr, "cannot create temporary directory {}: {}", pattern, strerror(errno));
    path_ = buffer;
    return path_;
  });
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace tessel
