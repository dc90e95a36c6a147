#include "runtime/Params.h"

#include <bit>
#include <cstring>

#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"

namespace tessel::runtime {

namespace {

constexpr char kParamsMagic[8] = {'T', 'E', 'S', 'S', 'E', 'L', 'P', 'R'};
constexpr uint32_t kVersion = 1;
// No real network has a tensor of more dimensions or a name this long: larger values mean a
// corrupt file, and reading them as sizes would allocate absurd amounts.
constexpr uint32_t kMaxRank = 16;
constexpr uint32_t kMaxNameLength = 4096;

static_assert(std::endian::native == std::endian::little, "the params format is little-endian");

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

/// Reads fields one by one, naming the origin, the entry and the offset when bytes run out.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& origin) : bytes_(bytes), origin_(origin) {}

  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  const char* take(size_t size, const char* what) {
    need(size, what);
    const char* p = bytes_.data() + offset_;
    offset_ += size;
    return p;
  }
  [[noreturn]] void corrupt(const std::string& message) const {
    fail("{}: {} (at byte {}{})", origin_, message, offset_, entry_.empty() ? "" : ", parameter '" + entry_ + "'");
  }
  void setEntry(std::string name) { entry_ = std::move(name); }
  bool atEnd() const { return offset_ == bytes_.size(); }

 private:
  void need(size_t size, const char* what) const {
    if (bytes_.size() - offset_ < size)
      corrupt(fmt::format("truncated: {} needs {} bytes, {} left", what, size, bytes_.size() - offset_));
  }
  const std::string& bytes_;
  const std::string& origin_;
  size_t offset_ = 0;
  std::string entry_;
};

}  // namespace

void saveParams(const NamedTensors& params, const std::string& path) {
  std::string out(kParamsMagic, sizeof(kParamsMagic));
  put<uint32_t>(out, kVersion);
  put<uint64_t>(out, params.size());
  for (const auto& [name, tensor] : params) {
    TESSEL_CHECK(tensor.defined(), "saving {}: parameter '{}' is undefined", path, name);
    Tensor host = tensor.to(Device::cpu());
    put<uint32_t>(out, uint32_t(name.size()));
    out += name;
    DataType t = host.dtype();
    put<uint8_t>(out, uint8_t(t.code));
    put<uint8_t>(out, t.bits);
    put<uint16_t>(out, t.lanes);
    put<uint32_t>(out, uint32_t(host.ndim()));
    for (int64_t d : host.shape()) put<int64_t>(out, d);
    put<uint64_t>(out, host.nbytes());
    out.append(static_cast<const char*>(host.data()), host.nbytes());
  }
  writeFile(path, out);
}

NamedTensors parseParams(const std::string& bytes, const std::string& origin) {
  Reader in(bytes, origin);
  const char* magic = in.take(sizeof(kParamsMagic), "the file header");
  if (std::memcmp(magic, kParamsMagic, sizeof(kParamsMagic)) != 0) in.corrupt("not a tessel parameters file (bad magic)");
  uint32_t version = in.get<uint32_t>("the format version");
  if (version != kVersion) in.corrupt(fmt::format("format version {} is not supported (this runtime reads {})", version, kVersion));
  uint64_t count = in.get<uint64_t>("the parameter count");
  NamedTensors params;
  for (uint64_t i = 0; i < count; ++i) {
    in.setEntry(fmt::format("#{}", i));
    uint32_t nameLength = in.get<uint32_t>("a name length");
    if (nameLength == 0 || nameLength > kMaxNameLength) in.corrupt(fmt::format("invalid name length {}", nameLength));
    std::string name(in.take(nameLength, "a name"), nameLength);
    in.setEntry(name);
    if (params.count(name)) in.corrupt("duplicate parameter name");
    auto code = in.get<uint8_t>("the dtype code");
    auto bits = in.get<uint8_t>("the dtype bits");
    auto lanes = in.get<uint16_t>("the dtype lanes");
    if (code > uint8_t(DataType::Code::Bool) || bits == 0 || lanes != 1)
      in.corrupt(fmt::format("invalid dtype (code {}, bits {}, lanes {})", code, bits, lanes));
    DataType dtype(DataType::Code(code), bits, lanes);
    uint32_t ndim = in.get<uint32_t>("the rank");
    if (ndim > kMaxRank) in.corrupt(fmt::format("invalid rank {}", ndim));
    std::vector<int64_t> shape(ndim);
    uint64_t elements = 1;
    for (auto& d : shape) {
      d = in.get<int64_t>("a dimension");
      if (d < 0 || (d > 0 && elements > (uint64_t(1) << 62) / uint64_t(d))) in.corrupt(fmt::format("invalid dimension {}", d));
      elements *= uint64_t(d);
    }
    uint64_t size = in.get<uint64_t>("the byte count");
    if (size != elements * uint64_t(dtype.storageBytes()))
      in.corrupt(fmt::format("byte count {} does not match {} {}", size, dtype.str(), formatShape(shape)));
    const char* data = in.take(size, "the tensor data");
    Tensor t = Tensor::empty(shape, dtype);
    t.copyFromHost(data, size);
    params.emplace(std::move(name), std::move(t));
  }
  in.setEntry("");
  if (!in.atEnd()) in.corrupt("unexpected bytes after the last parameter");
  return params;
}

NamedTensors loadParams(const std::string& path) { return parseParams(readFile(path, file_kinds::kParams), path); }

}  // namespace tessel::runtime
