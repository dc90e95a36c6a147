#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/Npy.h"
#include "common/ErrorText.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::testsupport;
using namespace tessel::runtime;

namespace {



/// A .npy file as NumPy writes it (version 1.0), with a header we choose.
std::string npyFile(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 16 != 0) header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY";
  file += char(major);
  file += char(0);
  file += char(header.size() & 0xff);
  file += char(header.size() >> 8);
  if (major != 1) file += std::string(2, '\0');
  return file + header + data;
}

template <class T>
std::string bytesOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

}  // namespace

TEST(Npy, RoundTripsEveryDtype) {
  TempDir dir;
  std::vector<DataType> dtypes = {DataType::float32(), DataType::float16(), DataType::float64(),
                                  DataType::int8(),    DataType::uint8(),   DataType::int32(),
                                  DataType::int64(),   DataType::boolean(), DataType::int16(),
                                  DataType::uint32(),  DataType(DataType::Code::UInt, 16),
                                  DataType(DataType::Code::UInt, 64)};
  std::vector<std::vector<int64_t>> shapes = {{2, 3}, {5}, {}, {0, 4}, {2, 1, 3}};
  for (DataType dtype : dtypes) {
    for (const auto& shape : shapes) {
      Tensor t = Tensor::empty(shape, dtype);
      auto* bytes = static_cast<unsigned char*>(t.data());
      for (size_t i = 0; i < t.nbytes(); ++i)
        bytes[i] = dtype.isBool() ? (i % 3 == 0) : static_cast<unsigned char>(i * 37 + 11);
      std::string path = dir.path() + "/t.npy";
      saveNpy(t, path);
      Tensor back = loadNpy(path);
      SCOPED_TRACE(dtype.str() + " " + formatShape(shape));
      EXPECT_EQ(back.dtype(), dtype);
      EXPECT_EQ(back.shape(), shape);
      EXPECT_EQ(back.device(), Device::cpu());
      ASSERT_EQ(back.nbytes(), t.nbytes());
      EXPECT_EQ(std::memcmp(back.data(), t.data(), t.nbytes()), 0);
    }
  }
}

TEST(Npy, WritesVersion1HeadersAsNumPyDoes) {
  TempDir dir;
  std::string path = dir.path() + "/a.npy";
  Tensor t = Tensor::empty({2, 3}, DataType::float32());
  for (int i = 0; i < 6; ++i) t.dataAs<float>()[i] = float(i);
  saveNpy(t, path);
  std::string file = readFile(path);
  ASSERT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(file[6], 1);
  EXPECT_EQ(file[7], 0);
  size_t headerLength = static_cast<unsigned char>(file[8]) | (static_cast<unsigned char>(file[9]) << 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u);
  std::string header = file.substr(10, headerLength);
  EXPECT_EQ(header.back(), '\n');
  expectContains(header, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(file.size(), 10 + headerLength + 24);
  float last;
  std::memcpy(&last, file.data() + file.size() - 4, 4);
  EXPECT_EQ(last, 5.0f);

  saveNpy(Tensor::empty({7}, DataType::int8()), path);
  expectContains(readFile(path), "'descr': '|i1', 'fortran_order': False, 'shape': (7,), }");
  saveNpy(Tensor::empty({}, DataType::boolean()), path);
  expectContains(readFile(path), "'descr': '|b1', 'fortran_order': False, 'shape': (), }");
  saveNpy(Tensor::empty({1}, DataType::int64()), path);
  expectContains(readFile(path), "'descr': '<i8'");
  saveNpy(Tensor::empty({1}, DataType::float16()), path);
  expectContains(readFile(path), "'descr': '<f2'");
}

TEST(Npy, ReadsFilesWrittenByNumPy) {
  TempDir dir;
  std::string path = dir.path() + "/n.npy";
  // Python-2-era 16-byte alignment, a different key order, format 2.0: all valid .npy.
  writeFile(path, npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", bytesOf<int32_t>({1, -2, 3, 4})));
  Tensor a = loadNpy(path);
  EXPECT_EQ(a.dtype(), DataType::int32());
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.dataAs<int32_t>()[1], -2);

  writeFile(path, npyFile("{'shape': (3,), 'fortran_order': True, 'descr': '<f8'}", bytesOf<double>({0.5, 1.5, 2.5}), 2));
  Tensor b = loadNpy(path);  // Fortran order is the same bytes for one dimension
  EXPECT_EQ(b.dtype(), DataType::float64());
  EXPECT_EQ(b.dataAs<double>()[2], 2.5);

  writeFile(path, npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\x00\x02\x01", 3)));
  Tensor c = loadNpy(path);
  EXPECT_EQ(c.dtype(), DataType::boolean());
  EXPECT_EQ(c.dataAs<uint8_t>()[0], 0);
  EXPECT_EQ(c.dataAs<uint8_t>()[1], 1);  // normalized
  EXPECT_TRUE(c.dataAs<bool>()[2]);
}

TEST(Npy, BrokenFilesGiveClearErrors) {
  TempDir dir;
  std::string path = dir.path() + "/broken.npy";
  std::string good = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", std::string(24, '\0'));

  writeFile(path, good.substr(0, good.size() - 5));
  std::string message = errorOf([&] { loadNpy(path); });
  expectContains(message, path);
  expectContains(message, "truncated");
  expectContains(message, "needs 24 bytes after the header, found 19");

  writeFile(path, good.substr(0, 30));
  message = errorOf([&] { loadNpy(path); });
  expectContains(message, path);
  expectContains(message, "truncated");

  writeFile(path, good.substr(0, 4));
  expectContains(errorOf([&] { loadNpy(path); }), "truncated");
  writeFile(path, "");
  expectContains(errorOf([&] { loadNpy(path); }), "truncated");

  writeFile(path, npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", std::string(24, '\0')));
  message = errorOf([&] { loadNpy(path); });
  expectContains(message, path);
  expectContains(message, "Fortran order");

  writeFile(path, npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0')));
  message = errorOf([&] { loadNpy(path); });
  expectContains(message, path);
  expectContains(message, "unsupported dtype '<c8'");

  writeFile(path, npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')));
  expectContains(errorOf([&] { loadNpy(path); }), "big-endian");

  writeFile(path, npyFile("{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }", std::string(40, '\0')));
  expectContains(errorOf([&] { loadNpy(path); }), "unsupported dtype '<U5'");

  writeFile(path, npyFile("{'descr': '<f4', 'shape': (2,), }", std::string(8, '\0')));
  expectContains(errorOf([&] { loadNpy(path); }), "no 'fortran_order'");

  writeFile(path, npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", std::string(8, '\0')));
  expectContains(errorOf([&] { loadNpy(path); }), "malformed .npy header");

  writeFile(path, npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000000), }", std::string(8, '\0')));
  expectContains(errorOf([&] { loadNpy(path); }), "truncated");  // rejected before allocating

  writeFile(path, npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000000000000, 0), }", ""));
  EXPECT_EQ(loadNpy(path).numel(), 0);

  writeFile(path, "just some text, not an array");
  message = errorOf([&] { loadNpy(path); });
  expectContains(message, path);
  expectContains(message, "not a .npy file");

  std::string missing = dir.path() + "/missing.npy";
  expectContains(errorOf([&] { loadNpy(missing); }), missing);
}

TEST(Npy, SaveRejectsWhatNpyCannotHold) {
  TempDir dir;
  expectContains(errorOf([&] { saveNpy(Tensor(), dir.path() + "/x.npy"); }), "undefined");
  expectContains(errorOf([&] { saveNpy(Tensor::empty({1}, DataType::float32()), dir.path() + "/no/such/dir/x.npy"); }),
                 "no/such/dir/x.npy");
}
