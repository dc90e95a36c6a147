#include "graph/frontends/OnnxExternalData.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <algorithm>
#include <cstring>

#include "support/Error.h"

namespace tessel::graph::onnx_import {

namespace {

/// A decimal offset or length of external_data.
uint64_t parseCount(const std::string& text, const std::string& key, const std::string& what) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  TESSEL_CHECK(!text.empty() && ec == std::errc() && end == text.data() + text.size(),
               "{}: external data {} '{}' is not a byte count", what, key, text);
  return value;
}

/// Whether `path` lies inside `folder` (both made canonical: '..' and symbolic links resolved).
bool isInside(const std::filesystem::path& path, const std::filesystem::path& folder) {
  auto p = path.begin();
  for (auto f = folder.begin(); f != folder.end(); ++f, ++p)
    if (p == path.end() || *p != *f) return false;
  return p != path.end();
}

}  // namespace

ExternalData::~ExternalData() {
  for (auto& [location, file] : files_) ::close(file.fd);
}

const ExternalData::OpenFile& ExternalData::open(const std::string& location, const std::string& what) {
  if (auto it = files_.find(location); it != files_.end()) return it->second;
  TESSEL_CHECK(!location.empty(), "{}: its external data has an empty location", what);
  std::filesystem::path relative(location);
  TESSEL_CHECK(relative.is_relative(), "{}: external data location '{}' is an absolute path (ONNX locations are relative to the model's folder)",
               what, location);
  std::error_code ec;
  std::filesystem::path folder = std::filesystem::canonical(directory_, ec);
  TESSEL_CHECK(!ec, "{}: the model's folder {} cannot be read: {}", what, directory_.string(), ec.message());
  std::filesystem::path target = std::filesystem::weakly_canonical(folder / relative, ec);
  TESSEL_CHECK(!ec && isInside(target, folder), "{}: external data location '{}' leaves the model's folder {}", what, location,
               folder.string());
  std::string path = target.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TESSEL_CHECK(fd >= 0, "{}: its external data file {} cannot be read: {}", what, path,
               errno == ENOENT ? "no such file" : std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    fail("{}: its external data {} is not a regular file", what, path);
  }
  return files_[location] = OpenFile{fd, uint64_t(info.st_size)};
}

ExternalData::Extent ExternalData::locate(const onnx::TensorProto& proto, const std::string& what, uint64_t bytes) {
  TESSEL_CHECK(!directory_.empty(), "{}: its data is in an external file, and the model was not read from a file (no folder to find it in)",
               what);
  TESSEL_CHECK(!proto.has_raw_data(), "{}: it has both external data and raw data", what);
  std::string location;
  uint64_t offset = 0, length = bytes;
  bool hasLength = false;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    else if (entry.key() == "offset") offset = parseCount(entry.value(), "offset", what);
    else if (entry.key() == "length") {
      length = parseCount(entry.value(), "length", what);
      hasLength = true;
    }
    // "checksum" (a SHA-1 digest) and keys of other tools are not read.
  }
  TESSEL_CHECK(!location.empty(), "{}: its data is external but names no location", what);
  TESSEL_CHECK(!hasLength || length == bytes, "{}: its external data is {} bytes long, the tensor's shape and type need {}", what,
               length, bytes);
  const OpenFile& file = open(location, what);
  TESSEL_CHECK(offset <= file.size && bytes <= file.size - offset,
               "{}: external data '{}' has {} bytes, too few for {} bytes from offset {}", what, location, file.size, bytes,
               offset);
  return {&file, location, offset};
}

void ExternalData::read(const Extent& extent, const std::string& what, char* out, uint64_t bytes) {
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(extent.file->fd, out + done, size_t(std::min<uint64_t>(bytes - done, uint64_t(1) << 30)),
                        off_t(extent.offset + done));
    if (n < 0 && errno == EINTR) continue;
    TESSEL_CHECK(n > 0, "{}: reading external data '{}' failed at byte {}: {}", what, extent.location, extent.offset + done,
                 n < 0 ? std::strerror(errno) : "the file ended (it was cut while it was read)");
    done += uint64_t(n);
  }
}

}  // namespace tessel::graph::onnx_import
