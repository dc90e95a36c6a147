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
  std::string buffer = pattern;
  TESSEL_CHECK(mkdtemp(buffer.data()) != nullptr, "cannot create temporary directory {}: {}", pattern, strerror(errno));
  path_ = buffer;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TESSEL_CHECK(in.good(), "cannot read {}: {}", path, strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  TESSEL_CHECK(out.good(), "cannot write {}: {}", path, strerror(errno));
  out << contents;
  out.flush();
  TESSEL_CHECK(out.good(), "cannot write {}: {}", path, strerror(errno));
}

}  // namespace tessel
