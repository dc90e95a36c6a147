// The worker's measuring logic, in process: inputs, comparison, error replies.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "target/HostCpu.h"
#include "runtime/Tensor.h"
#include "runtime/TimeEvaluator.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "tune/MeasureErrorNo.h"
#include "tune/worker/MeasureSession.h"

using namespace tessel;
using namespace tessel::tune;
using namespace tessel::tune::worker;

TEST(MeasureErrorNo, NumbersAreTvms) {
  EXPECT_EQ(int(MeasureErrorNo::NoError), 0);
  EXPECT_EQ(int(MeasureErrorNo::InstantiationError), 1);
  EXPECT_EQ(int(MeasureErrorNo::CompileHostError), 2);
  EXPECT_EQ(int(MeasureErrorNo::CompileDeviceError), 3);
  EXPECT_EQ(int(MeasureErrorNo::RuntimeDeviceError), 4);
  EXPECT_EQ(int(MeasureErrorNo::WrongAnswerError), 5);
  EXPECT_EQ(int(MeasureErrorNo::BuildTimeoutError), 6);
  EXPECT_EQ(int(MeasureErrorNo::RunTimeoutError), 7);
  EXPECT_EQ(int(MeasureErrorNo::UnknownError), 8);
  EXPECT_STREQ(measureErrorName(MeasureErrorNo::RunTimeoutError), "RunTimeoutError");
  EXPECT_EQ(measureErrorFromNumber(42), MeasureErrorNo::UnknownError);
  EXPECT_EQ(measureErrorFromNumber(5), MeasureErrorNo::WrongAnswerError);
}

TEST(MeasureSession, RandomInputsAreSeededAndInRange) {
  runtime::ArgSpec f{"A", DataType::float32(), {64}};
  runtime::ArgSpec u{"Q", DataType::uint8(), {64}};
  auto a = randomTensor(f, 5), b = randomTensor(f, 5), c = randomTensor(f, 6);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), a.nbytes()), 0);
  for (int i = 0; i < 64; ++i) {
    EXPECT_GE(a.dataAs<float>()[i], 0.0f);
    EXPECT_LT(a.dataAs<float>()[i], 1.0f);
  }
  auto q = randomTensor(u, 1);
  for (int i = 0; i < 64; ++i) EXPECT_LE(q.dataAs<uint8_t>()[i], 8);
}

TEST(MeasureSession, ComparisonFindsTheWorstElement) {
  auto ref = runtime::Tensor::empty({4}, DataType::float32());
  auto got = runtime::Tensor::empty({4}, DataType::float32());
  float r[4] = {1, 2, 4, 8}, g[4] = {1, 2, 5, 8};
  ref.copyFromHost(r, sizeof r);
  got.copyFromHost(g, sizeof g);
  auto c = compareOutputs(got, ref);
  EXPECT_EQ(c.worstIndex, 2);
  EXPECT_DOUBLE_EQ(c.maxError, 0.25);
  EXPECT_EQ(c.got, 5);
  EXPECT_EQ(c.expected, 4);
  g[1] = std::nanf("");
  got.copyFromHost(g, sizeof g);
  EXPECT_TRUE(std::isinf(compareOutputs(got, ref).maxError));  // an unwritten (NaN) element is wrong
}

TEST(MeasureSession, IntegersCompareExactly) {
  auto ref = runtime::Tensor::empty({3}, DataType::int32());
  auto got = runtime::Tensor::empty({3}, DataType::int32());
  int32_t r[3] = {100, -7, 3}, g[3] = {100, -8, 3};
  ref.copyFromHost(r, sizeof r);
  got.copyFromHost(g, sizeof g);
  auto c = compareOutputs(got, ref);
  EXPECT_EQ(c.worstIndex, 1);
  EXPECT_EQ(c.maxError, 1);
}

TEST(MeasureSession, BadRequestsGetErrorReplies) {
  MeasureSession session;
  auto missing = session.handle({{"id", 3}, {"kernel", "k"}});
  EXPECT_EQ(missing["id"], 3);
  EXPECT_EQ(missing["error_no"], int(MeasureErrorNo::UnknownError));
  EXPECT_NE(missing["message"].get<std::string>().find("library"), std::string::npos) << missing.dump();

  auto noLibrary = session.handle({{"id", 4}, {"library", "/nonexistent/candidate.so"}, {"kernel", "k"}, {"num_inputs", 1}});
  EXPECT_EQ(noLibrary["error_no"], int(MeasureErrorNo::RuntimeDeviceError));
  EXPECT_NE(noLibrary["message"].get<std::string>().find("/nonexistent/candidate.so"), std::string::npos)
      << noLibrary.dump();
}

namespace {

// A kernel that remembers the address of every input it was called with: which copies of the
// arguments a measurement's calls read.
const char* kAddressRecorder = R"C(
#include "support/KernelAbi.h"
static const void* seen[4096];
static int count;
int32_t touch(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {
  (void)num_args; (void)error; (void)error_capacity;
  if (count < 4096) seen[count++] = args[0].data;
  ((float*)args[1].data)[0] = ((const float*)args[0].data)[0];
  return 0;
}
int recorded_count(void) { return count; }
const void* recorded(int i) { return seen[i]; }
void forget(void) { count = 0; }
const char* tessel_module_manifest(void) {
  return "{\"kernels\": [{\"name\": \"touch\", \"args\": ["
         "{\"name\": \"X\", \"dtype\": \"float32\", \"shape\": [1048576]},"
         "{\"name\": \"Y\", \"dtype\": \"float32\", \"shape\": [1]}]}]}";
}
)C";

class ColdMeasurement : public ::testing::Test {
 protected:
  void SetUp() override {
    library_ = dir_.path() + "/librecorder.so";
    writeFile(dir_.path() + "/recorder.c", kAddressRecorder);
    auto built = runSubprocess({"cc", "-shared", "-fPIC", "-O2", "-I" TESSEL_SOURCE_DIR "/src", dir_.path() + "/recorder.c",
                                "-o", library_});
    ASSERT_TRUE(built.ok()) << built.output;
    // Held open so that the recorder's memory outlives the session's own load and unload.
    handle_ = dlopen(library_.c_str(), RTLD_NOW);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (handle_) dlclose(handle_);
  }
  /// The distinct input addresses the calls of one measurement read.
  std::set<const void*> measure(MeasureSession& session, bool cold) {
    reinterpret_cast<void (*)()>(dlsym(handle_, "forget"))();
    auto reply = session.handle({{"id", 1}, {"library", library_}, {"kernel", "touch"}, {"num_inputs", 1}, {"number", 8},
                                 {"repeat", 4}, {"cold", cold}});
    EXPECT_EQ(reply.value("error_no", -1), 0) << reply.dump();
    auto count = reinterpret_cast<int (*)()>(dlsym(handle_, "recorded_count"));
    auto recorded = reinterpret_cast<const void* (*)(int)>(dlsym(handle_, "recorded"));
    std::set<const void*> out;
    for (int i = 0; i < count(); ++i) out.insert(recorded(i));
    return out;
  }
  TempDir dir_;
  std::string library_;
  void* handle_ = nullptr;
};

}  // namespace

TEST_F(ColdMeasurement, CallsRotateThroughCopiesLargerThanTheLastLevelCache) {
  MeasureSession session;
  EXPECT_EQ(measure(session, false).size(), 1u);  // warm: every call reads the same input
  // Cold: 4 MiB of input, in copies that together pass twice the last-level cache (at least
  // two); the 32 calls visit each of them.
  size_t expected = std::clamp<size_t>((2 * size_t(target::hostCpu().llcBytes) + (4u << 20)) / ((4u << 20) + 4), 2, 32);
  std::set<const void*> first = measure(session, true);
  EXPECT_GE(first.size(), expected);
  // The next candidate of the task rotates through the same copies (copying them again for
  // each candidate cost more than most measurements): only its own arguments are new.
  std::set<const void*> second = measure(session, true);
  size_t shared = 0;
  for (const void* p : second) shared += first.count(p);
  EXPECT_GE(shared + 1, second.size());
  EXPECT_GE(second.size(), expected);
}
