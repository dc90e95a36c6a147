#include "vta/ModuleBuilder.h"

#include <fmt/format.h>

#include <map>

#include "support/Error.h"
#include "vta/DenseLowering.h"

namespace tessel::vta {

namespace {

/// A packed convolution or dense: the host keeps its naive schedule (the CPU int8 reference).
bool isPackedGemm(const te::ComputeDAG& dag) {
  for (const te::Operation& op : dag.ops())
    if (op->tag == "conv2d_blocked" || op->tag == "dense_blocked") return true;
  return false;
}

uint64_t numel(const graph::TensorType& type) {
  uint64_t n = 1;
  for (int64_t d : type.shape) n *= uint64_t(d);
  return n;
}

uint64_t bytesOf(const graph::TensorType& type) { return numel(type) * uint64_t(type.dtype.storageBytes()); }

nlohmann::json describe(const Conv2dWorkload& workload, const Conv2dTiling& t) {
  return {{"tiling", {t.rows, t.columns, t.inputBlocks, t.outputBlocks, t.loadBufferSets, t.accumulatorSets}},
          {"gemms", workload.gemmCount()}};
}

/// One group's program recorded by `emit` on a scratch device, with a segment per call argument
/// (the group's inputs, then its output) that the runtime relocates.
CallProgram recordGroupProgram(const graph::Graph& packed, const graph::FusedGroup& group, size_t call, const PackedConvolution& conv,
                               const HardwareConfig& config, nlohmann::json description,
                               const std::function<void(CommandStream&, const Conv2dBuffers&)>& emit) {
  // A scratch device: the program is recorded, never run, so the buffers stay zero and only
  // their addresses matter (each becomes a segment the runtime relocates).
  Simulator scratch(config);
  CommandStream stream(scratch);
  std::map<int, DeviceBuffer> bufferOf;
  CallProgram program;
  program.call = call;
  program.name = packed.node(group.output).name;
  program.storedBytes = conv.storedBytes;
  program.description = std::move(description);
  std::vector<DeviceBuffer> arguments;
  for (int node : group.inputs) {
    uint64_t bytes = bytesOf(packed.node(node).type);
    arguments.push_back(stream.allocate(bytes));
    bufferOf[node] = arguments.back();
    program.arguments.push_back({0, bytes, packed.node(node).kind == graph::NodeKind::Constant});
  }
  uint64_t outputBytes = bytesOf(packed.node(group.output).type);
  TESSEL_CHECK(outputBytes == uint64_t(conv.storedBytes) * numel(packed.node(group.output).type),
               "node '{}': {} stored bytes per value for a {} result", program.name, conv.storedBytes,
               packed.node(group.output).type.str());
  arguments.push_back(stream.allocate(outputBytes));
  program.arguments.push_back({0, outputBytes, false});
  Conv2dBuffers buffers;
  auto buffer = [&](int node) {
    auto it = bufferOf.find(node);
    TESSEL_CHECK(it != bufferOf.end(), "node '{}' is not an input of the group of '{}'", packed.node(node).name, program.name);
    return it->second;
  };
  buffers.data = buffer(conv.data);
  buffers.weight = buffer(conv.weight);
  for (const AluStep& s : conv.epilogue)
    if (!s.immediate) buffers.operands.push_back(buffer(s.operand));
  buffers.output = arguments.back();
  emit(stream, buffers);
  program.program = stream.finishProgram();
  for (size_t k = 0; k < arguments.size(); ++k) {
    bool found = false;
    for (size_t s = 0; s < program.program.memory.size() && !found; ++s)
      if (program.program.memory[s].address == arguments[k].address) {
        program.arguments[k].segment = s;
        found = true;
      }
    TESSEL_CHECK(found, "argument {} of '{}' has no memory segment", k, program.name);
  }
  return program;
}


}  // namespace

CallProgram recordCallProgram(const graph::Graph& packed, const graph::FusedGroup& group, size_t call, const Conv2dTiling& tiling,
                              const HardwareConfig& config) {
  PackedConvolution conv = describePackedConvolution(packed, group);
  Conv2dWorkload workload = Conv2dWorkload::of(packed, conv.convolution);
  return recordGroupProgram(packed, group, call, conv, config, describe(workload, tiling),
                            [&](CommandStream& stream, const Conv2dBuffers& buffers) {
                              emitConv2d(stream, workload, tiling, conv, buffers);
                            });
}

CallProgram recordDenseCallProgram(const graph::Graph& packed, const graph::FusedGroup& group, size_t call,
                                   const HardwareConfig& config) {
  PackedConvolution dense = describePackedConvolution(packed, group, "dense_blocked");
  DenseWorkload workload = DenseWorkload::of(packed, dense.convolution);
  DenseTiling t = defaultDenseTiling(workload, dense, config);
  // The profile's tiling columns: the batch blocks per tile as rows.
  nlohmann::json description = {
      {"tiling", {t.batchBlocks, 1, t.inputBlocks, t.outputBlocks, t.loadBufferSets, t.accumulatorSets}},
      {"gemms", workload.gemmCount()},
      {"operator", "dense_packed"}};
  return recordGroupProgram(packed, group, call, dense, config, description,
                            [&](CommandStream& stream, const Conv2dBuffers& buffers) {
                              emitDense(stream, workload, t, dense, buffers);
                            });
}


graph::BuildReport buildVtaModule(const graph::Graph& packed, const HardwareConfig& config, const TilingChoice& tilingOf,
                                  const std::string& output, graph::BuildOptions host,
                                  const std::vector<std::string>* tilingNotes) {
  graph::ScheduleProvider hostSchedule = host.schedule;
  host.schedule = [hostSchedule](const te::ComputeDAG& dag) {
    return isPackedGemm(dag) || !hostSchedule ? std::vector<schedule::StepPtr>{} : hostSchedule(dag);
  };
  TESSEL_CHECK(host.fuse, "a VTA module needs fused functions (a packed convolution group is one call)");
  std::vector<graph::FusedGroup> groups = graph::fuseOperators(packed);
  ModulePrograms programs;
  programs.config = config;
  for (size_t c = 0; c < groups.size(); ++c) {
    if (packedConvolutionOf(packed, groups[c], "dense_blocked") >= 0) {
      try {
        programs.calls.push_back(recordDenseCallProgram(packed, groups[c], c, config));
      } catch (const Error& e) {
        throw e.withContext("VTA: the group of node '" + packed.node(groups[c].output).name + "'");
      }
      continue;
    }
    if (packedConvolutionOf(packed, groups[c]) < 0) continue;
    try {
      PackedConvolution conv = describePackedConvolution(packed, groups[c]);
      Conv2dWorkload workload = Conv2dWorkload::of(packed, conv.convolution);
      size_t notesBefore = tilingNotes ? tilingNotes->size() : 0;
      Conv2dTiling tiling = tilingOf ? tilingOf(workload, conv) : defaultConv2dTiling(workload, conv, config);
      programs.calls.push_back(recordCallProgram(packed, groups[c], c, tiling, config));
      if (tilingNotes && tilingNotes->size() > notesBefore) programs.calls.back().description["tiling_note"] = tilingNotes->back();
    } catch (const Error& e) {
      throw e.withContext("VTA: the group of node '" + packed.node(groups[c].output).name + "'");
    }
  }
  graph::BuildReport report = graph::buildGraph(packed, output, host);
  // Call c of the executor is fused group c: the programs name calls by that index.
  TESSEL_CHECK(size_t(report.functions) == groups.size(), "the host build has {} calls for the network's {} fused groups",
               report.functions, groups.size());
  programs.save(output + "/" + kModuleProgramsFile);
  return report;
}

std::vector<VtaGroupRun> moduleGroupRuns(const ModulePrograms& programs, const std::vector<VtaCallRun>& runs) {
  std::vector<VtaGroupRun> rows;
  for (size_t p = 0; p < programs.calls.size() && p < runs.size(); ++p) {
    const nlohmann::json& d = programs.calls[p].description;
    VtaGroupRun row;
    row.name = runs[p].name;
    row.cycles = runs[p].cycles;
    row.profile = runs[p].profile;
    if (d.contains("tiling") && d["tiling"].is_array() && d["tiling"].size() == 6) {
      auto t = d["tiling"].get<std::vector<int64_t>>();
      row.tiling = {t[0], t[1], t[2], t[3], t[4], t[5]};
    }
    if (d.contains("gemms") && d["gemms"].is_number_unsigned()) row.gemms = d["gemms"].get<uint64_t>();
    rows.push_back(row);
  }
  return rows;
}

}  // namespace tessel::vta
