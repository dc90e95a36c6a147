// libFuzzer harness: VTA programs (vta/Program.h). Bytes either fail with an Error or load and
// run on a fresh simulator, which must end with the program's FINISH or an Error naming the
// instruction (deadlock, bad index, past the work budget): never a crash or a stray write.
#include <cstdint>
#include <string>

#include "support/Error.h"
#include "support/Json.h"
#include "vta/Program.h"
#include "vta/Simulator.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    vta::Program program = vta::Program::fromJson(parseJson(std::string_view(reinterpret_cast<const char*>(data), size), "program"));
    // The harness's own limits (not the format's): a fuzz input may ask for the 4 GiB a board
    // has, or work that takes minutes; both are tested elsewhere.
    uint64_t image = 0;
    for (const auto& segment : program.memory) image += segment.bytes;
    if (image > (uint64_t(64) << 20)) return 0;
    vta::SimulatorOptions options;
    options.maxWork = uint64_t(1) << 22;
    vta::Simulator simulator(program.config, options);
    program.runOn(simulator);
  } catch (const Error&) {
  }
  return 0;
}
