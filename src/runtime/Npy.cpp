#include "runtime/Npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>

#include <fmt/ranges.h>

#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"

namespace tessel::runtime {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

/// NumPy's dtype string ("<f4", "|b1") for a tensor dtype, or nullopt when .npy cannot hold it.
std::optional<std::string> descriptorOf(DataType dtype) {
  if (!dtype.isScalar()) return std::nullopt;
  int bytes = dtype.storageBytes();
  switch (dtype.code) {
    case DataType::Code::Bool: return std::string("|b1");
    case DataType::Code::Float:
      if (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64) return fmt::format("<f{}", bytes);
      return std::nullopt;
    case DataType::Code::Int:
    case DataType::Code::UInt: {
      if (dtype.bits != 8 && dtype.bits != 16 && dtype.bits != 32 && dtype.bits != 64) return std::nullopt;
      char kind = dtype.code == DataType::Code::Int ? 'i' : 'u';
      return fmt::format("{}{}{}", bytes == 1 ? '|' : '<', kind, bytes);
    }
    case DataType::Code::Handle: return std::nullopt;
  }
  return std::nullopt;
}

/// Parses the Python dict literal of a .npy header:
/// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortranOrder;
    std::optional<std::vector<int64_t>> shape;
  };

  Header parse() {
    Header header;
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        header.descr = parseString();
      } else if (key == "fortran_order") {
        header.fortranOrder = parseBool();
      } else if (key == "shape") {
        header.shape = parseShape();
      } else {
        bad(fmt::format("unexpected key '{}'", key));
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        bad("expected ',' or '}'");
      }
    }
    return header;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const {
    fail("cannot load '{}': malformed .npy header ({} at offset {} of \"{}\")", path_, why, pos_, text_);
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void expect(char c) {
    skipSpace();
    if (peek() != c) bad(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string parseString() {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    auto end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return value;
  }
  bool parseBool() {
    skipSpace();
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    bad("expected True or False");
  }
  std::vector<int64_t> parseShape() {
    std::vector<int64_t> shape;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')') {
        ++pos_;
        return shape;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("expected a non-negative dimension");
      int64_t value = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (value > (std::numeric_limits<int64_t>::max() - 9) / 10) bad("dimension too large");
        value = value * 10 + (text_[pos_++] - '0');
      }
      // A Python long literal may end in L (written by NumPy under Python 2).
      if (peek() == 'L') ++pos_;
      shape.push_back(value);
      skipSpace();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        bad("expected ',' or ')'");
      }
    }
  }

  const std::string& text_;
  const std::string& path_;
  size_t pos_ = 0;
};

DataType dtypeOfDescriptor(const std::string& descr, const std::string& path) {
  auto unsupported = [&](const std::string& why) -> Error {
    return Error(fmt::format("cannot load '{}': unsupported dtype '{}' ({}); supported: float16/32/64, "
                             "int8/16/32/64, uint8/16/32/64 and bool, little-endian",
                             path, descr, why));
  };
  if (descr.size() < 3) throw unsupported("unknown type string");
  char order = descr[0];
  char kind = descr[1];
  std::string sizeText = descr.substr(2);
  if (sizeText.empty() || sizeText.size() > 2 ||
      !std::all_of(sizeText.begin(), sizeText.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    throw unsupported("unknown type string");
  int bytes = std::stoi(sizeText);
  if (order != '<' && order != '|' && order != '=' && order != '>') throw unsupported("unknown byte order");
  if (order == '>' && bytes > 1) throw unsupported("big-endian data");
  switch (kind) {
    case 'b':
      if (bytes == 1) return DataType::boolean();
      break;
    case 'f':
      if (bytes == 2 || bytes == 4 || bytes == 8) return DataType(DataType::Code::Float, bytes * 8);
      break;
    case 'i':
    case 'u':
      if (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)
        return DataType(kind == 'i' ? DataType::Code::Int : DataType::Code::UInt, bytes * 8);
      break;
    default: break;
  }
  throw unsupported("unknown element type");
}

}  // namespace

Tensor loadNpy(const std::string& path) { return parseNpy(readFile(path, file_kinds::kTensor), path); }

Tensor parseNpy(const std::string& file, const std::string& path) {
  auto truncated = [&](const std::string& what) -> Error {
    return Error(fmt::format("cannot load '{}': file is truncated ({}; the file has {} bytes)", path, what,
                             file.size()));
  };
  if (file.size() < kMagicSize || std::memcmp(file.data(), kMagic, kMagicSize) != 0) {
    if (file.size() < kMagicSize && std::memcmp(file.data(), kMagic, file.size()) == 0)
      throw truncated("the magic string is incomplete");
    fail("cannot load '{}': not a .npy file (it does not start with \\x93NUMPY)", path);
  }
  if (file.size() < kMagicSize + 2) throw truncated("the version is missing");
  int major = static_cast<unsigned char>(file[6]);
  int minor = static_cast<unsigned char>(file[7]);
  TESSEL_CHECK(major >= 1 && major <= 3, "cannot load '{}': unsupported .npy format version {}.{}", path, major, minor);
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t headerStart = kMagicSize + 2 + lengthBytes;
  if (file.size() < headerStart) throw truncated("the header length is missing");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= size_t(static_cast<unsigned char>(file[kMagicSize + 2 + i])) << (8 * i);
  if (file.size() < headerStart + headerLength)
    throw truncated(fmt::format("the header needs {} bytes", headerStart + headerLength));
  std::string headerText = file.substr(headerStart, headerLength);

  auto header = HeaderParser(headerText, path).parse();
  TESSEL_CHECK(header.descr.has_value(), "cannot load '{}': the .npy header has no 'descr'", path);
  TESSEL_CHECK(header.fortranOrder.has_value(), "cannot load '{}': the .npy header has no 'fortran_order'", path);
  TESSEL_CHECK(header.shape.has_value(), "cannot load '{}': the .npy header has no 'shape'", path);
  DataType dtype = dtypeOfDescriptor(*header.descr, path);
  const auto& shape = *header.shape;
  bool trivialLayout = shape.size() <= 1;  // Fortran and C order are the same bytes then
  TESSEL_CHECK(!*header.fortranOrder || trivialLayout,
               "cannot load '{}': the array of shape {} is stored in Fortran order; only C order is supported "
               "(save it with numpy.ascontiguousarray)",
               path, formatShape(shape));

  // Check the size against the file before allocating: a corrupt header must not ask for terabytes.
  size_t dataStart = headerStart + headerLength;
  size_t available = file.size() - dataStart;
  size_t needed = size_t(dtype.storageBytes());
  for (int64_t extent : shape) {
    if (extent != 0 && needed > std::numeric_limits<size_t>::max() / size_t(extent)) {
      needed = std::numeric_limits<size_t>::max();
      break;
    }
    needed *= size_t(extent);
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) needed = 0;
  if (available < needed)
    throw truncated(fmt::format("the data of shape {} and dtype {} needs {} bytes after the header, found {}",
                                formatShape(shape), dtype.str(), needed, available));
  Tensor tensor = Tensor::empty(shape, dtype);
  tensor.copyFromHost(file.data() + dataStart, tensor.nbytes());
  if (dtype.isBool()) {
    // Only 0 and 1 are valid bools; normalize anything else rather than hand out UB.
    auto* bytes = static_cast<unsigned char*>(tensor.data());
    for (int64_t i = 0; i < tensor.numel(); ++i) bytes[i] = bytes[i] != 0;
  }
  return tensor;
}

void saveNpy(const Tensor& tensor, const std::string& path) {
  TESSEL_CHECK(tensor.defined(), "cannot save '{}': the tensor is undefined", path);
  auto descr = descriptorOf(tensor.dtype());
  TESSEL_CHECK(descr.has_value(), "cannot save '{}': dtype {} cannot be stored in a .npy file", path,
               tensor.dtype().str());
  std::string shapeText;
  if (tensor.ndim() == 1) {
    shapeText = fmt::format("({},)", tensor.shape()[0]);
  } else {
    shapeText = fmt::format("({})", fmt::join(tensor.shape(), ", "));
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", *descr, shapeText);
  // Pad with spaces and end in a newline so that the data starts on a 64-byte boundary.
  size_t prefix = kMagicSize + 2 + 2;
  size_t total = prefix + header.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  header.append(padded - total, ' ');
  header.push_back('\n');
  TESSEL_CHECK(header.size() <= 0xffff, "cannot save '{}': the .npy header is too long for format 1.0", path);

  std::string file(kMagic, kMagicSize);
  file.push_back(char(1));
  file.push_back(char(0));
  file.push_back(char(header.size() & 0xff));
  file.push_back(char((header.size() >> 8) & 0xff));
  file += header;
  size_t dataStart = file.size();
  file.resize(dataStart + tensor.nbytes());
  if (tensor.nbytes() > 0) tensor.copyToHost(file.data() + dataStart, tensor.nbytes());
  writeFile(path, file);
}

}  // namespace tessel::runtime
