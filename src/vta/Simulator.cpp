#include "vta/Simulator.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "support/Error.h"
#include "vta/Disassembler.h"

namespace tessel::vta {

namespace {

/// The four token queues, named by producer and consumer.
enum Queue { LoadToCompute, ComputeToLoad, StoreToCompute, ComputeToStore, kQueueCount };
const char* queueName(int queue) {
  static const char* names[] = {"load->compute", "compute->load", "store->compute",
                                "compute->store"};
  return names[queue];
}

/// What one instruction pops and pushes, resolved from its flags and module.
struct TokenUse {
  std::array<int, 2> pops{};
  int popCount = 0;
  std::array<int, 2> pushes{};
  int pushCount = 0;
};

std::string describe(std::span<const Instruction> program, size_t index) {
  return fmt::format("instruction #{} ({})", index, disassemble(program[index]));
}

/// Checks the flags a module may use and turns them into queue operations.
TokenUse tokenUse(std::span<const Instruction> program, size_t index) {
  const Instruction& in = program[index];
  const DependencyFlags& flags = in.dependencies;
  TokenUse use;
  auto pop = [&use](int queue) { use.pops[use.popCount++] = queue; };
  auto push = [&use](int queue) { use.pushes[use.pushCount++] = queue; };
  switch (in.stage()) {
    case Stage::Load:
      TESSEL_CHECK(!flags.popPrevious && !flags.pushPrevious,
                   "{}: the load module has no previous module, so pop_prev and push_prev must be 0",
                   describe(program, index));
      if (flags.popNext) pop(ComputeToLoad);
      if (flags.pushNext) push(LoadToCompute);
      break;
    case Stage::Compute:
      if (flags.popPrevious) pop(LoadToCompute);
      if (flags.popNext) pop(StoreToCompute);
      if (flags.pushPrevious) push(ComputeToLoad);
      if (flags.pushNext) push(ComputeToStore);
      break;
    case Stage::Store:
      TESSEL_CHECK(!flags.popNext && !flags.pushNext,
                   "{}: the store module has no next module, so pop_next and push_next must be 0",
                   describe(program, index));
      if (flags.popPrevious) pop(ComputeToStore);
      if (flags.pushPrevious) push(StoreToCompute);
      break;
  }
  return use;
}

struct Module {
  explicit Module(const char* moduleName) : name(moduleName) {}
  const char* name;
  std::vector<uint32_t> instructions;  // indices into the program, in program order
  size_t next = 0;
  uint64_t clock = 0;  // when the module is free
  bool pending() const { return next < instructions.size(); }
};

}  // namespace

uint64_t instructionWork(const Instruction& in, const HardwareConfig& config) {
  auto product = [](std::initializer_list<uint64_t> factors) {
    unsigned __int128 p = 1;
    for (uint64_t f : factors) {
      p *= f;
      if (p > UINT64_MAX) return UINT64_MAX;
    }
    return uint64_t(p);
  };
  const uint64_t microOps = in.microOpEnd > in.microOpBegin ? in.microOpEnd - in.microOpBegin : 0;
  switch (in.opcode) {
    case Opcode::Gemm:
      return product({in.iterationsOuter, in.iterationsInner, microOps, uint64_t(config.batch()), uint64_t(config.blockIn()),
                      uint64_t(config.blockOut())});
    case Opcode::Alu:
      return product({in.iterationsOuter, in.iterationsInner, microOps, uint64_t(config.accumulatorLanes())});
    case Opcode::Load:
    case Opcode::Store:
      // Padded rows and columns are written too; one unit per element, whatever its width.
      return product({uint64_t(in.ySize) + in.yPadBefore + in.yPadAfter, uint64_t(in.xSize) + in.xPadBefore + in.xPadAfter,
                      uint64_t(config.accumulatorLanes())});
    default: return 1;
  }
}

Simulator::Simulator(const HardwareConfig& config, const SimulatorOptions& options)
    : config_((config.validate(), config)),
      options_(options),
      codec_(config),
      datapath_(std::make_unique<Datapath>(config_, memory_, statistics_,
                                           selectGemmKernel(config_, options.gemmKernel), options.computeValues)),
      cycleModel_(config_, options.timing),
      random_(options.seed) {}

Simulator::~Simulator() = default;

void Simulator::setExecutionOrder(ExecutionOrder order, uint64_t seed) {
  options_.order = order;
  options_.seed = seed;
  random_.seed(seed);
}

void Simulator::run(uint64_t instructionAddress, uint32_t count) {
  TESSEL_CHECK(count > 0, "VTA run: no instructions (a program ends with FINISH)");
  const uint64_t bytes = uint64_t(count) * config_.instructionBytes();
  const uint8_t* words = memory_.find(instructionAddress, bytes);
  TESSEL_CHECK(words != nullptr,
               "VTA run: the {} instructions at {:#x} are not inside one device allocation", count,
               instructionAddress);
  std::vector<Instruction> program(count);
  for (uint32_t index = 0; index < count; ++index) {
    EncodedInstruction bits;
    std::memcpy(bits.data(), words + size_t(index) * 16, 16);
    try {
      program[index] = codec_.decode(bits);
    } catch (const Error& error) {
      throw error.withContext(fmt::format("VTA run: instruction #{} ({:016x}{:016x})", index,
                                          bits[1], bits[0]));
    }
  }
  run(program);
}

RunProfile& RunProfile::operator+=(const RunProfile& o) {
  cycles += o.cycles;
  gemmCycles += o.gemmCycles;
  resetCycles += o.resetCycles;
  aluCycles += o.aluCycles;
  computeLoadCycles += o.computeLoadCycles;
  loadCycles += o.loadCycles;
  storeCycles += o.storeCycles;
  return *this;
}

void Simulator::account(const Instruction& in, int module, uint64_t busy) {
  if (module == 0) profile_.loadCycles += busy;
  else if (module == 2) profile_.storeCycles += busy;
  else if (in.opcode == Opcode::Gemm) (in.resetAccumulator ? profile_.resetCycles : profile_.gemmCycles) += busy;
  else if (in.opcode == Opcode::Alu) profile_.aluCycles += busy;
  else if (in.opcode == Opcode::Load) profile_.computeLoadCycles += busy;
}

void Simulator::run(std::span<const Instruction> program) {
  std::array<Module, 3> modules{Module("load"), Module("compute"), Module("store")};
  std::vector<TokenUse> tokens(program.size());
  for (size_t index = 0; index < program.size(); ++index) {
    tokens[index] = tokenUse(program, index);
    modules[int(program[index].stage()) - 1].instructions.push_back(uint32_t(index));
  }
  // Each queue holds the completion times of the instructions that pushed its tokens.
  std::array<std::deque<uint64_t>, kQueueCount> queues;
  cycleModel_.reset();
  profile_ = RunProfile{};
  uint64_t work = 0;

  auto canStart = [&](const Module& module) {
    if (!module.pending()) return false;
    const TokenUse& use = tokens[module.instructions[module.next]];
    for (int i = 0; i < use.popCount; ++i)
      if (queues[use.pops[i]].empty()) return false;
    return true;
  };
  auto startTime = [&](const Module& module) {
    const TokenUse& use = tokens[module.instructions[module.next]];
    uint64_t start = module.clock;
    for (int i = 0; i < use.popCount; ++i) start = std::max(start, queues[use.pops[i]].front());
    return start;
  };

  while (true) {
    std::array<int, 3> ready{};
    int readyCount = 0;
    for (int m = 0; m < 3; ++m)
      if (canStart(modules[m])) ready[readyCount++] = m;

    if (readyCount == 0) {
      const bool anyPending = std::any_of(modules.begin(), modules.end(),
                                          [](const Module& module) { return module.pending(); });
      TESSEL_CHECK(anyPending, "VTA run: the program ended without FINISH ({} instructions ran)",
                   program.size());
      std::string waits;
      for (const Module& module : modules) {
        if (!module.pending()) continue;
        const size_t index = module.instructions[module.next];
        std::string empty;
        const TokenUse& use = tokens[index];
        for (int i = 0; i < use.popCount; ++i)
          if (queues[use.pops[i]].empty()) empty += fmt::format(" {}", queueName(use.pops[i]));
        waits += fmt::format("; the {} module waits at {} to pop from the empty queue{}",
                             module.name, describe(program, index), empty);
      }
      fail("VTA run: deadlock: no module can proceed and no push can come{}", waits);
    }

    int chosen = ready[0];
    if (options_.order == ExecutionOrder::Random) {
      chosen = ready[std::uniform_int_distribution<int>(0, readyCount - 1)(random_)];
    } else {
      uint64_t earliest = startTime(modules[chosen]);
      for (int i = 1; i < readyCount; ++i) {
        const uint64_t start = startTime(modules[ready[i]]);
        if (start < earliest) {
          earliest = start;
          chosen = ready[i];
        }
      }
    }

    Module& module = modules[chosen];
    const uint32_t index = module.instructions[module.next];
    const Instruction& in = program[index];
    const TokenUse& use = tokens[index];
    const uint64_t start = startTime(module);
    for (int i = 0; i < use.popCount; ++i) queues[use.pops[i]].pop_front();
    const uint64_t cost = instructionWork(in, config_);
    if (cost > options_.maxWork - std::min(work, options_.maxWork))
      fail("VTA run: {} would bring the run past its work budget of {} element operations ({} so far, {} for it); "
           "a program this large is not simulated (SimulatorOptions::maxWork, tessel vta run --max-work)",
           describe(program, index), options_.maxWork, work, cost);
    work += cost;
    try {
      datapath_->execute(in);
    } catch (const Error& error) {
      throw error.withContext(fmt::format("VTA run: {}", describe(program, index)));
    }
    const uint64_t done = cycleModel_.complete(in, start);
    account(in, chosen, done - start);
    module.clock = done;
    ++module.next;
    for (int i = 0; i < use.pushCount; ++i) queues[use.pushes[i]].push_back(done);

    if (in.opcode == Opcode::Finish) {
      for (const Module& other : modules) {
        TESSEL_CHECK(!other.pending(),
                     "VTA run: FINISH ({}) ran while the {} module still had {} to run: FINISH "
                     "must come last and wait for the other modules through dependency tokens",
                     describe(program, index), other.name,
                     describe(program, other.instructions[other.next]));
      }
      for (int queue = 0; queue < kQueueCount; ++queue)
        TESSEL_CHECK(queues[queue].empty(),
                     "VTA run: the program finished with {} token(s) left in the {} queue: pushes "
                     "without matching pops would disturb the next run",
                     queues[queue].size(), queueName(queue));
      lastRunCycles_ = 0;
      for (const Module& finished : modules) lastRunCycles_ = std::max(lastRunCycles_, finished.clock);
      statistics_.cycles += lastRunCycles_;
      lastRunProfile_ = profile_;
      lastRunProfile_.cycles = lastRunCycles_;
      profile_ = RunProfile{};
      return;
    }
  }
}

}  // namespace tessel::vta
