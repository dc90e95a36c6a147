// libFuzzer harness: VTA configurations (vta_config.json). Bytes either fail with an Error or
// give a valid configuration whose instruction layout and description can be made.
#include <cstdint>
#include <string>

#include "support/Error.h"
#include "support/Json.h"
#include "vta/HardwareConfig.h"
#include "vta/InstructionSet.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto config = vta::HardwareConfig::fromJson(parseJson(std::string_view(reinterpret_cast<const char*>(data), size), "config"));
    (void)config.describe();
    vta::InstructionCodec codec(config);
    (void)codec.layout();
  } catch (const Error&) {
  }
  return 0;
}
