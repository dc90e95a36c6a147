/// The choice between a layer's convolution variants by what was measured: a stride-1 3x3
/// convolution can run directly or as Winograd with one of several tiles, and tuning measures
/// each variant's fused function as a task of its own. A build with records gives each layer
/// the fastest variant that has a measured cost — one measured variant is enough, so a record
/// tuned for the direct convolution alone is used — and the rules' choice only where no
/// variant was measured.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/Graph.h"
#include "graph/passes/GraphPasses.h"

namespace tessel::graph {

/// The measured cost (seconds) of a fused function by its workload key; nothing where there is
/// no measurement.
using MeasuredCost = std::function<std::optional<double>(const std::string& workloadKey)>;

/// How the layers were decided, counted over the Winograd candidates of the variants.
struct VariantChoiceCounts {
  int fasterWinograd = 0, fasterDirect = 0;  ///< measured direct and as Winograd: the faster form won
  int onlyWinograd = 0, onlyDirect = 0;      ///< measured in one form only: that form
  int byRules = 0;                           ///< measured in no form: the rules' choice
  /// "measured both ways: 5 faster as Winograd, 2 faster direct; measured one way: 1 as
  /// Winograd, 3 direct; by the rules: 1" (the one-way part only when there is one).
  std::string describe() const;
};

/// Per layer (by node name), the tile size of its fastest measured variant (0: direct).
/// `direct` is the network with every convolution direct; `winograd` its Winograd forms (a
/// layer is a candidate when some form makes it Winograd, with that form's tile); `rules` the
/// form whose tile a layer measured in no variant takes. Layers keep their names across the
/// variants, and each variant's fused function of a layer is found by its workload key.
struct VariantChoice {
  WinogradChoice choice;  ///< for applyWinograd on the network before the variants
  VariantChoiceCounts counts;
};
VariantChoice chooseVariantsByCost(const Graph& direct, const std::vector<Graph>& winograd, const Graph& rules,
                                   const MeasuredCost& costOf);

}  // namespace tessel::graph
