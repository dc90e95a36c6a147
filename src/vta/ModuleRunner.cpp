#include "vta/ModuleRunner.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>

#include "support/Error.h"
#include "vta/BytePlanes.h"
#include "vta/Disassembler.h"
#include "vta/VtaDeviceApi.h"

namespace tessel::vta {

/// One program on the device: its segments' allocations and its relocated instruction stream.
struct ModuleRunner::Loaded {
  std::vector<void*> segments;  ///< host pointers of the device allocations, per segment
  void* instructions = nullptr;
  uint64_t instructionAddress = 0;
  uint32_t instructionCount = 0;
  bool constantsUploaded = false;
};

namespace {

/// The segment of `program` that holds [first, first + bytes), or -1.
int segmentHolding(const Program& program, uint64_t first, uint64_t bytes) {
  for (size_t s = 0; s < program.memory.size(); ++s) {
    const Program::Segment& segment = program.memory[s];
    if (first >= segment.address && bytes <= segment.bytes && first - segment.address <= segment.bytes - bytes) return int(s);
  }
  return -1;
}

uint64_t descriptorBytes(const TesselTensor& t) {
  uint64_t n = (uint64_t(t.dtype_bits) + 7) / 8 * std::max<uint16_t>(t.dtype_lanes, 1);
  for (int32_t i = 0; i < t.ndim; ++i) n *= uint64_t(std::max<int64_t>(t.shape[i], 0));
  return n;
}

}  // namespace

ModuleRunner::ModuleRunner(ModulePrograms programs, runtime::Device device)
    : programs_(std::move(programs)), api_(runtime::sharedDeviceAPI(device)), simulator_(vtaSimulator(device)) {
  TESSEL_CHECK(simulator_.config() == programs_.config, "the module's VTA programs are built for {}, device '{}' is {}",
               programs_.config.modelName(), device.str(), simulator_.config().modelName());
  const InstructionCodec& codec = simulator_.codec();
  DeviceMemory& memory = simulator_.memory();
  loaded_.resize(programs_.calls.size());
  for (size_t p = 0; p < programs_.calls.size(); ++p) {
    const CallProgram& call = programs_.calls[p];
    const Program& program = call.program;
    Loaded& l = loaded_[p];
    runs_.push_back({call.name, 0, {}});
    try {
      std::vector<uint64_t> address;
      for (const Program::Segment& segment : program.memory) {
        l.segments.push_back(api_->allocate(segment.bytes, DeviceMemory::kPageBytes));
        address.push_back(memory.physicalAddress(l.segments.back()));
        // Private segments (micro-op kernels) carry their contents; arguments are filled per call.
        api_->copyFromHost(l.segments.back(), segment.data.data(), segment.data.size());
      }
      TESSEL_CHECK(!program.instructions.empty(), "no instructions");
      std::vector<EncodedInstruction> relocated;
      relocated.reserve(program.instructions.size());
      for (size_t i = 0; i < program.instructions.size(); ++i) {
        Instruction in = codec.decode(program.instructions[i]);
        bool transfer = (in.opcode == Opcode::Load || in.opcode == Opcode::Store) && in.xSize > 0 && in.ySize > 0;
        if (transfer) {
          const uint64_t elementBytes = dramElementBytes(in.memoryType, programs_.config);
          const uint64_t first = uint64_t(in.dramBase) * elementBytes;
          const uint64_t bytes = (uint64_t(in.ySize - 1) * in.xStride + in.xSize) * elementBytes;
          int s = segmentHolding(program, first, bytes);
          TESSEL_CHECK(s >= 0, "instruction #{} ({}) reaches DRAM bytes [{:#x}, {:#x}), in none of the program's segments", i,
                       disassemble(in), first, first + bytes);
          const uint64_t moved = address[size_t(s)] + (first - program.memory[size_t(s)].address);
          TESSEL_CHECK(moved % elementBytes == 0 && moved / elementBytes <= UINT32_MAX,
                       "instruction #{}: relocated address {:#x} is no {}-byte element index", i, moved, elementBytes);
          in.dramBase = uint32_t(moved / elementBytes);
        }
        relocated.push_back(codec.encode(in));
      }
      const uint64_t bytes = relocated.size() * sizeof(EncodedInstruction);
      l.instructions = api_->allocate(bytes, DeviceMemory::kPageBytes);
      l.instructionAddress = memory.physicalAddress(l.instructions);
      l.instructionCount = uint32_t(relocated.size());
      api_->copyFromHost(l.instructions, relocated.data(), bytes);
    } catch (const Error& e) {
      releaseAll();  // the destructor does not run for a constructor that throws
      throw e.withContext(fmt::format("VTA program of call {} ('{}')", call.call, call.name));
    }
  }
}

ModuleRunner::~ModuleRunner() { releaseAll(); }

void ModuleRunner::releaseAll() {
  for (Loaded& l : loaded_) {
    for (void* p : l.segments) api_->release(p);
    api_->release(l.instructions);
    l = Loaded{};
  }
}

void ModuleRunner::run(size_t index, const TesselTensor* args, int count) {
  const CallProgram& call = programs_.calls.at(index);
  Loaded& l = loaded_[index];
  auto where = [&] { return fmt::format("VTA program of call {} ('{}')", call.call, call.name); };
  TESSEL_CHECK(size_t(count) == call.arguments.size(), "{}: {} arguments, the program takes {}", where(), count,
               call.arguments.size());
  for (size_t k = 0; k < call.arguments.size(); ++k)
    TESSEL_CHECK(descriptorBytes(args[k]) == call.arguments[k].bytes, "{}: argument {} has {} bytes, the program expects {}", where(),
                 k, descriptorBytes(args[k]), call.arguments[k].bytes);
  for (size_t k = 0; k + 1 < call.arguments.size(); ++k) {
    const CallProgram::Argument& a = call.arguments[k];
    if (a.constant && l.constantsUploaded) continue;
    api_->copyFromHost(l.segments[a.segment], args[k].data, a.bytes);
  }
  l.constantsUploaded = true;
  try {
    simulator_.run(l.instructionAddress, l.instructionCount);
  } catch (const Error& e) {
    throw e.withContext(where());
  }
  runs_[index].cycles = simulator_.lastRunCycles();
  runs_[index].profile = simulator_.lastRunProfile();
  const CallProgram::Argument& out = call.arguments.back();
  void* result = args[count - 1].data;
  if (call.storedBytes == 1) {
    api_->copyToHost(result, l.segments[out.segment], out.bytes);
  } else {
    std::vector<int8_t> planes(out.bytes);
    api_->copyToHost(planes.data(), l.segments[out.segment], out.bytes);
    joinBytePlanes(planes.data(), out.bytes / 4, static_cast<int32_t*>(result));
  }
}

VtaModuleExecutor loadVtaModuleExecutor(const std::string& directory, runtime::Device device) {
  VtaModuleExecutor loaded{runtime::GraphExecutor::load(directory), nullptr};
  const std::string path = directory + "/" + kModuleProgramsFile;
  if (!std::filesystem::exists(path)) return loaded;
  ModulePrograms programs = ModulePrograms::load(path);
  for (const CallProgram& c : programs.calls)
    TESSEL_CHECK(c.call < loaded.executor.numCalls(), "{}: call {} ('{}') is past the module's {} calls", path, c.call, c.name,
                 loaded.executor.numCalls());
  try {
    loaded.runner = std::make_shared<ModuleRunner>(std::move(programs), device);
  } catch (const Error& e) {
    throw e.withContext(path);
  }
  std::shared_ptr<ModuleRunner> runner = loaded.runner;
  for (size_t p = 0; p < runner->programs().calls.size(); ++p)
    loaded.executor.replaceCall(runner->programs().calls[p].call,
                                [runner, p](const TesselTensor* args, int count) { runner->run(p, args, count); });
  return loaded;
}

}  // namespace tessel::vta
