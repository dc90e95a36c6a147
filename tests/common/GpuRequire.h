/// Test support: what a GPU test does when its device is missing. It skips with the reason
/// ("no CUDA device: ..."), unless TESSEL_REQUIRE_CUDA=1 / TESSEL_REQUIRE_OPENCL=1 is set (as
/// `make test-gpu` sets the first on a GPU machine), where a missing device is a failure: a
/// broken driver load must not pass as a skip there.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tessel::testsupport {

inline bool deviceRequired(const char* variable) {
  const char* value = std::getenv(variable);
  return value && std::string(value) == "1";
}

}  // namespace tessel::testsupport

/// Skips (or fails, when required) the test unless `available(&why)` says the device is there.
#define TESSEL_REQUIRE_DEVICE(available, variable)                                            \
  do {                                                                                        \
    std::string tesselWhy;                                                                    \
    if (!(available)(&tesselWhy)) {                                                           \
      if (::tessel::testsupport::deviceRequired(variable)) FAIL() << variable "=1: " << tesselWhy; \
      GTEST_SKIP() << tesselWhy;                                                              \
    }                                                                                         \
  } while (0)

#define TESSEL_REQUIRE_CUDA() TESSEL_REQUIRE_DEVICE(::tessel::runtime::cudaDeviceAvailable, "TESSEL_REQUIRE_CUDA")
#define TESSEL_REQUIRE_OPENCL() TESSEL_REQUIRE_DEVICE(::tessel::runtime::openclDeviceAvailable, "TESSEL_REQUIRE_OPENCL")
