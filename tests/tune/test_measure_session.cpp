// The worker's measuring logic, in process: inputs, comparison, error replies.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/Tensor.h"
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
