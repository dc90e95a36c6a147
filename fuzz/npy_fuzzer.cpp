// libFuzzer harness: .npy files (runtime/Npy.h). Bytes either fail with an Error or give a
// tensor whose every byte can be read.
#include <cstdint>
#include <string>

#include "runtime/Npy.h"
#include "support/Error.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    runtime::Tensor t = runtime::parseNpy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    const volatile uint8_t* bytes = static_cast<const uint8_t*>(t.data());
    uint8_t sum = 0;
    for (size_t i = 0; i < t.nbytes(); ++i) sum = uint8_t(sum + bytes[i]);
    (void)sum;
    (void)runtime::countNonFinite(t);
  } catch (const Error&) {
  }
  return 0;
}
