#include "vta/GraphPacking.h"

#include "support/Error.h"
#include "vta/ShortcutFusion.h"

namespace tessel::vta {

graph::GraphPackOptions graphPackOptions(const HardwareConfig& config, const std::string& start, const std::string& stop) {
  TESSEL_CHECK(config.blockIn() == config.blockOut(), "graph pack: BLOCK_IN {} differs from BLOCK_OUT {}", config.blockIn(),
               config.blockOut());
  graph::GraphPackOptions options;
  options.batchBlock = config.batch();
  options.channelBlock = config.blockOut();
  options.start = graph::parseOperatorOccurrence(start);
  options.stop = graph::parseOperatorOccurrence(stop);
  return options;
}

graph::Graph prepareForVta(const graph::Graph& model, const HardwareConfig& config, const std::string& start,
                           const std::string& stop) {
  graph::GraphPackOptions pack = graphPackOptions(config, start, stop);  // bad names fail before any work
  graph::OptimizeOptions prepare;
  prepare.desiredLayout = std::nullopt;  // packing reads NCHW
  return markShortcutsForFusion(graph::graphPack(graph::quantize(graph::optimizeGraph(model, prepare)), pack));
}

}  // namespace tessel::vta
