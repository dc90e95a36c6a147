// The simulator as the runtime's vta device: tensors allocated through the DeviceAPI are device
// memory that a command stream's loads and stores address.
#include <gtest/gtest.h>

#include "runtime/Device.h"
#include "support/Error.h"
#include "vta/CommandStream.h"
#include "vta/VtaDeviceApi.h"

using namespace tessel;
using namespace tessel::vta;

TEST(VtaDevice, RuntimeBuffersAreSimulatorMemory) {
  registerVtaSimulatorDevice();
  const runtime::Device device = runtime::Device::parse("vta");
  runtime::DeviceAPI& api = runtime::deviceAPI(device);
  EXPECT_NE(api.name().find("vta (simulator, sim_1x16_i8w8a32_15_15_18_17)"), std::string::npos);
  Simulator& simulator = vtaSimulator(device);

  std::vector<int32_t> values(16 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int32_t(i * 1000) - 20000;
  void* input = api.allocate(values.size() * 4, 64);
  void* output = api.allocate(values.size(), 64);
  api.copyFromHost(input, values.data(), values.size() * 4);
  const DeviceBuffer inputBuffer{simulator.memory().physicalAddress(input), values.size() * 4};
  const DeviceBuffer outputBuffer{simulator.memory().physicalAddress(output), values.size()};

  CommandStream stream(simulator);
  stream.loadBuffer2D(inputBuffer, 0, 4, 1, 4, Padding{}, MemoryType::Accumulator, 0);
  MicroKernel shift;
  shift.loop(4, 1, 1).push(0, 0);
  stream.alu(shift, AluOpcode::ShiftRight, 8);
  stream.dependencyPush(Stage::Compute, Stage::Store);
  stream.dependencyPop(Stage::Compute, Stage::Store);
  stream.storeBuffer2D(0, outputBuffer, 0, 4, 1, 4);
  stream.synchronize();

  std::vector<int8_t> result(values.size());
  api.copyToHost(result.data(), output, result.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(result[i], int8_t(uint32_t(values[i] >> 8) & 0xff)) << i;
  EXPECT_EQ(simulator.stats().aluCounter, 4u);
  api.release(input);
  api.release(output);
  EXPECT_THROW(simulator.memory().physicalAddress(input), Error);
}
