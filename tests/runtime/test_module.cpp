#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "FakeDeviceAPI.h"
#include "runtime/Module.h"
#include "common/ErrorText.h"
#include "support/Error.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::testsupport;
using namespace tessel::runtime;

namespace {



/// Kernels written by hand against KernelAbi.h, as codegen would emit them.
const char* kKernelSource = R"C(
#include <stdio.h>
#include "support/KernelAbi.h"

/* C = A + B over float32 [N]. */
int32_t vadd(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {
  if (num_args != 3) {
    snprintf(error, (size_t)error_capacity, "vadd: expected 3 arguments, got %d", (int)num_args);
    return 1;
  }
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) c[i] = a[i] + b[i];
  return 0;
}

/* C[M,N] = A[M,K] * B[K,N], sizes from the shapes. */
int32_t matmul(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {
  (void)num_args; (void)error; (void)error_capacity;
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  int64_t m = args[0].shape[0], k = args[0].shape[1], n = args[1].shape[1];
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t r = 0; r < k; ++r) sum += a[i * k + r] * b[r * n + j];
      c[i * n + j] = sum;
    }
  return 0;
}

/* Increments every element of an int64 tensor of any length. */
int32_t count_calls(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {
  (void)num_args; (void)error; (void)error_capacity;
  int64_t* x = (int64_t*)args[0].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) x[i] += 1;
  return 0;
}

int32_t always_fails(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {
  (void)args; (void)num_args;
  snprintf(error, (size_t)error_capacity, "argument 'X': value out of range");
  return 7;
}

int32_t fails_silently(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {
  (void)args; (void)num_args; (void)error; (void)error_capacity;
  return 3;
}

int32_t fails_verbosely(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {
  (void)args; (void)num_args;
  for (int32_t i = 0; i < error_capacity; ++i) error[i] = 'x'; /* not NUL-terminated */
  return 1;
}

const char* tessel_module_manifest(void) {
  return "{\"kernels\": ["
         " {\"name\": \"vadd\", \"args\": ["
         "   {\"name\": \"A\", \"dtype\": \"float32\", \"shape\": [16]},"
         "   {\"name\": \"B\", \"dtype\": \"float32\", \"shape\": [16]},"
         "   {\"name\": \"C\", \"dtype\": \"float32\", \"shape\": [16]}]},"
         " {\"name\": \"matmul\", \"args\": ["
         "   {\"name\": \"A\", \"dtype\": \"float32\", \"shape\": [4, 3]},"
         "   {\"name\": \"B\", \"dtype\": \"float32\", \"shape\": [3, 2]},"
         "   {\"name\": \"C\", \"dtype\": \"float32\", \"shape\": [4, 2]}]},"
         " {\"name\": \"count\", \"symbol\": \"count_calls\", \"args\": ["
         "   {\"name\": \"X\", \"dtype\": \"int64\", \"shape\": [-1]}]},"
         " {\"name\": \"always_fails\", \"args\": []},"
         " {\"name\": \"fails_silently\", \"args\": []},"
         " {\"name\": \"fails_verbosely\", \"args\": []},"
         " {\"name\": \"on_vta\", \"symbol\": \"vadd\", \"device\": \"vta\", \"args\": ["
         "   {\"name\": \"A\", \"dtype\": \"float32\", \"shape\": [16]},"
         "   {\"name\": \"B\", \"dtype\": \"float32\", \"shape\": [16]},"
         "   {\"name\": \"C\", \"dtype\": \"float32\", \"shape\": [16]}]}"
         "]}";
}
)C";

const char* kNoManifestSource = R"C(
int plain_function(int x) { return x + 1; }
)C";

const char* kBadManifestSource = R"C(
const char* tessel_module_manifest(void) { return "{\"kernels\": [{\"name\": \"ghost\", \"args\": []}]}"; }
)C";

const char* kInvalidJsonSource = R"C(
const char* tessel_module_manifest(void) { return "{\"kernels\": [ oops"; }
)C";

const char* kBadDtypeSource = R"C(
const char* tessel_module_manifest(void) {
  return "{\"kernels\": [{\"name\": \"k\", \"args\": [{\"name\": \"A\", \"dtype\": \"float7\", \"shape\": [1]}]}]}";
}
)C";

class ModuleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>("tessel-module-test");
    kernels_ = compile("kernels", kKernelSource);
    noManifest_ = compile("no_manifest", kNoManifestSource);
    badManifest_ = compile("bad_manifest", kBadManifestSource);
    invalidJson_ = compile("invalid_json", kInvalidJsonSource);
    badDtype_ = compile("bad_dtype", kBadDtypeSource);
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static std::string compile(const std::string& name, const char* source) {
    std::string c = dir_->path() + "/" + name + ".c";
    std::string so = dir_->path() + "/lib" + name + ".so";
    writeFile(c, source);
    SubprocessOptions options;
    options.timeout = std::chrono::seconds(60);
    auto result = runSubprocess(
        {"cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-I" TESSEL_SOURCE_DIR "/src", c, "-o", so}, options);
    if (!result.ok()) throw Error("compiling " + name + " failed (" + result.describe() + "):\n" + result.output);
    return so;
  }

  static Tensor vector(std::vector<float> values) {
    Tensor t = Tensor::empty({int64_t(values.size())}, DataType::float32());
    t.copyFromHost(values.data(), values.size() * sizeof(float));
    return t;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::string kernels_, noManifest_, badManifest_, invalidJson_, badDtype_;
};

}  // namespace

TEST_F(ModuleTest, ReadsTheManifest) {
  Module module = Module::load(kernels_);
  EXPECT_EQ(module.path(), kernels_);
  EXPECT_EQ(module.kernelNames(), (std::vector<std::string>{"vadd", "matmul", "count", "always_fails",
                                                            "fails_silently", "fails_verbosely", "on_vta"}));
  EXPECT_TRUE(module.hasKernel("matmul"));
  EXPECT_FALSE(module.hasKernel("conv2d"));
  Kernel matmul = module.kernel("matmul");
  EXPECT_EQ(matmul.name(), "matmul");
  ASSERT_EQ(matmul.argSpecs().size(), 3u);
  EXPECT_EQ(matmul.argSpecs()[1].name, "B");
  EXPECT_EQ(matmul.argSpecs()[1].dtype, DataType::float32());
  EXPECT_EQ(matmul.argSpecs()[1].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(module.kernel("count").spec().symbol, "count_calls");
  EXPECT_EQ(module.kernel("on_vta").spec().device.kind, DeviceKind::VTA);
  expectContains(module.manifestText(), "\"kernels\"");
}

TEST_F(ModuleTest, UnknownKernelListsTheAvailableOnes) {
  Module module = Module::load(kernels_);
  std::string message = errorOf([&] { module.kernel("conv2d"); });
  expectContains(message, "has no kernel 'conv2d'");
  expectContains(message, "available: vadd, matmul, count, always_fails");
}

TEST_F(ModuleTest, VectorAddComputesTheSum) {
  Kernel vadd = Module::load(kernels_).kernel("vadd");  // the kernel keeps the library loaded
  std::vector<float> a(16), b(16);
  for (int i = 0; i < 16; ++i) {
    a[i] = float(i) * 0.5f;
    b[i] = 100.0f - float(i);
  }
  Tensor A = vector(a), B = vector(b), C = Tensor::empty({16}, DataType::float32());
  vadd.call({A, B, C});
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(C.dataAs<float>()[i], a[i] + b[i]) << i;
}

TEST_F(ModuleTest, MatmulMatchesAReference) {
  Module module = Module::load(kernels_);
  Tensor A = Tensor::empty({4, 3}, DataType::float32());
  Tensor B = Tensor::empty({3, 2}, DataType::float32());
  Tensor C = Tensor::empty({4, 2}, DataType::float32());
  for (int i = 0; i < 12; ++i) A.dataAs<float>()[i] = float(i % 5) - 2.0f;
  for (int i = 0; i < 6; ++i) B.dataAs<float>()[i] = float(i) * 0.25f + 1.0f;
  module.kernel("matmul").call({A, B, C});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) {
      float expected = 0;
      for (int k = 0; k < 3; ++k) expected += A.dataAs<float>()[i * 3 + k] * B.dataAs<float>()[k * 2 + j];
      EXPECT_FLOAT_EQ(C.dataAs<float>()[i * 2 + j], expected) << i << "," << j;
    }
}

TEST_F(ModuleTest, WrongArgumentsAreNamed) {
  Module module = Module::load(kernels_);
  Kernel matmul = module.kernel("matmul");
  auto f32 = [](std::vector<int64_t> shape) { return Tensor::empty(std::move(shape), DataType::float32()); };
  Tensor A = f32({4, 3}), B = f32({3, 2}), C = f32({4, 2});

  EXPECT_EQ(errorOf([&] { matmul.call({A, B}); }), "kernel 'matmul': expected 3 arguments, got 2");
  EXPECT_EQ(errorOf([&] { matmul.call({A, B, C, C}); }), "kernel 'matmul': expected 3 arguments, got 4");
  EXPECT_EQ(errorOf([&] { matmul.call({A, f32({3, 5}), C}); }),
            "kernel 'matmul', argument 'B' (2 of 3): expected shape [3, 2], got [3, 5]");
  EXPECT_EQ(errorOf([&] { matmul.call({A, B, Tensor::empty({4, 2}, DataType::int32())}); }),
            "kernel 'matmul', argument 'C' (3 of 3): expected dtype float32, got int32");
  EXPECT_EQ(errorOf([&] { matmul.call({f32({12}), B, C}); }),
            "kernel 'matmul', argument 'A' (1 of 3): expected rank 2 (shape [4, 3]), got rank 1 (shape [12])");
  EXPECT_EQ(errorOf([&] { matmul.call({A, Tensor(), C}); }),
            "kernel 'matmul', argument 'B' (2 of 3): the tensor is undefined");
  EXPECT_THROW(matmul.bind({A, B, f32({2, 4})}), Error);

  auto counters = fakes::registerFakeDevice(DeviceKind::VTA);
  Tensor onVta = B.to(Device{DeviceKind::VTA, 0});
  EXPECT_EQ(errorOf([&] { matmul.call({A, onVta, C}); }),
            "kernel 'matmul', argument 'B' (2 of 3): expected device cpu, got vta:0");
}

TEST_F(ModuleTest, DeviceOfTheManifestIsChecked) {
  auto counters = fakes::registerFakeDevice(DeviceKind::VTA);
  Kernel onVta = Module::load(kernels_).kernel("on_vta");
  Device vta0{DeviceKind::VTA, 0}, vta1{DeviceKind::VTA, 1};
  Tensor a = vector(std::vector<float>(16, 1.0f));
  EXPECT_EQ(errorOf([&] { onVta.call({a, a.to(vta0), a.to(vta0)}); }),
            "kernel 'on_vta', argument 'A' (1 of 3): expected device vta, got cpu:0");
  EXPECT_EQ(errorOf([&] { onVta.call({a.to(vta0), a.to(vta1), a.to(vta0)}); }),
            "kernel 'on_vta', argument 'B' (2 of 3): expected device vta:0 (the device of argument 'A'), got vta:1");
  // The fake device's memory is host memory, so the kernel can really run on it.
  Tensor c = Tensor::empty({16}, DataType::float32(), vta1);
  onVta.call({a.to(vta1), a.to(vta1), c});
  Tensor back = c.to(Device::cpu());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back.dataAs<float>()[i], 2.0f);
}

TEST_F(ModuleTest, KernelFailuresCarryTheKernelsMessage) {
  Module module = Module::load(kernels_);
  EXPECT_EQ(errorOf([&] { module.kernel("always_fails").call({}); }),
            "kernel 'always_fails' failed: argument 'X': value out of range");
  EXPECT_EQ(errorOf([&] { module.kernel("always_fails").callPacked(nullptr, 0); }),
            "kernel 'always_fails' failed: argument 'X': value out of range");
  EXPECT_EQ(errorOf([&] { module.kernel("fails_silently").call({}); }),
            "kernel 'fails_silently' failed with code 3 (no message)");
  std::string verbose = errorOf([&] { module.kernel("fails_verbosely").call({}); });
  expectContains(verbose, "kernel 'fails_verbosely' failed: xxxx");
  EXPECT_LT(verbose.size(), 1100u);
  auto bound = module.kernel("always_fails").bind({});
  EXPECT_EQ(errorOf(bound), "kernel 'always_fails' failed: argument 'X': value out of range");
}

TEST_F(ModuleTest, CallPackedSkipsTheManifestChecks) {
  Kernel vadd = Module::load(kernels_).kernel("vadd");
  // The manifest says [16]; packed calls trust the caller, so a shorter vector runs.
  Tensor A = vector({1, 2, 3}), B = vector({10, 20, 30}), C = Tensor::empty({3}, DataType::float32());
  TesselTensor args[] = {A.abi(), B.abi(), C.abi()};
  vadd.callPacked(args, 3);
  EXPECT_EQ(C.dataAs<float>()[2], 33.0f);
  EXPECT_EQ(errorOf([&] { vadd.callPacked(args, 2); }), "kernel 'vadd' failed: vadd: expected 3 arguments, got 2");
}

TEST_F(ModuleTest, BindChecksOnceAndKeepsTensorsAlive) {
  std::function<void()> run;
  Tensor counter;
  {
    Module module = Module::load(kernels_);
    Tensor x = Tensor::empty({5}, DataType::int64());
    for (int i = 0; i < 5; ++i) x.dataAs<int64_t>()[i] = i;
    counter = x;
    run = module.kernel("count").bind({x});
  }  // the module and the caller's handle are gone; the closure keeps library and tensor
  for (int i = 0; i < 10; ++i) run();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(counter.dataAs<int64_t>()[i], i + 10);
  // -1 in the manifest accepts any extent, but not another rank.
  Kernel count = Module::load(kernels_).kernel("count");
  EXPECT_NO_THROW(count.call({Tensor::empty({1}, DataType::int64())}));
  EXPECT_EQ(errorOf([&] { count.call({Tensor::empty({2, 2}, DataType::int64())}); }),
            "kernel 'count', argument 'X' (1 of 1): expected rank 1 (shape [?]), got rank 2 (shape [2, 2])");
}

TEST_F(ModuleTest, LoadErrorsNameTheFileAndTheProblem) {
  std::string missing = dir_->path() + "/libmissing.so";
  EXPECT_EQ(errorOf([&] { Module::load(missing); }), "cannot load module '" + missing + "': no such file");

  std::string message = errorOf([&] { Module::load(noManifest_); });
  expectContains(message, noManifest_);
  expectContains(message, "not a tessel module");

  message = errorOf([&] { Module::load(badManifest_); });
  expectContains(message, badManifest_);
  expectContains(message, "kernel 'ghost' is listed in the manifest but the library does not export 'ghost'");

  message = errorOf([&] { Module::load(invalidJson_); });
  expectContains(message, invalidJson_);
  expectContains(message, "invalid manifest: not valid JSON");

  message = errorOf([&] { Module::load(badDtype_); });
  expectContains(message, "invalid manifest: kernel 'k', argument 'A': invalid dtype 'float7'");

  std::string garbage = dir_->path() + "/libgarbage.so";
  writeFile(garbage, "this is not an ELF file");
  message = errorOf([&] { Module::load(garbage); });
  EXPECT_EQ(message, "cannot load module '" + garbage + "': not a shared library (it does not start with the ELF magic \\x7fELF)");
}

// dlopen maps segments straight from the file: a library cut short used to die of SIGBUS
// on first touch, with no message. The headers are checked before dlopen sees the file.
TEST_F(ModuleTest, DamagedLibrariesAreRefusedBeforeDlopen) {
  std::string good = readFile(kernels_, file_kinds::kSharedLibrary);
  ASSERT_GT(good.size(), 10000u);
  auto variant = [&](const std::string& name, std::string bytes) {
    std::string path = dir_->path() + "/" + name;
    writeFile(path, bytes);
    return path;
  };
  for (size_t length : {size_t(10), size_t(63), size_t(200), good.size() / 2, good.size() - 1}) {
    std::string cut = variant("libcut" + std::to_string(length) + ".so", good.substr(0, length));
    std::string message = errorOf([&] { Module::load(cut); });
    expectContains(message, "cannot load module '" + cut + "': ");
    expectContains(message, length < 64 ? "bytes" : "truncated");
  }
#if defined(__x86_64__)
  std::string arm = good;
  arm[18] = char(183);  // e_machine = EM_AARCH64
  arm[19] = 0;
  expectContains(errorOf([&] { Module::load(variant("libarm.so", arm)); }), "built for aarch64, but this machine is x86-64");
#endif
  std::string thirtyTwo = good;
  thirtyTwo[4] = 1;  // EI_CLASS = ELFCLASS32
  expectContains(errorOf([&] { Module::load(variant("lib32.so", thirtyTwo)); }), "a 32-bit ELF file");
  expectContains(errorOf([&] { Module::load(dir_->path()); }), "it is a directory");
  expectContains(errorOf([&] { Module::load("/dev/zero"); }), "it is a character device, not a regular file");
  // The intact library still loads.
  EXPECT_NO_THROW(Module::load(variant("libcopy.so", good)));
}
