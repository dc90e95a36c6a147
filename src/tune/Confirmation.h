/// The confirmation that ends a task's search, shared by template tuning and the
/// auto-scheduler: the best candidates and the default schedule (the fallback) are built once
/// and measured again in rounds, interleaved in a fresh shuffled order each round, so that a
/// drift in the machine's speed hits them alike. A candidate replaces the fallback only if,
/// compared round by round with it, it is faster in most rounds, its median ratio to it is
/// below 1 - margin, and its median cost is lower. The search's own costs, each measured at a
/// different moment, cannot tell a 1% gain from the machine's drift; this can.
#pragma once
#include <optional>
#include <vector>

#include "tune/LoadMonitor.h"
#include "tune/MeasureBatch.h"

namespace tessel::tune {

struct ConfirmOptions {
  int rounds = 5;
  double margin = 0.01;
  uint64_t seed = 0;  ///< of the shuffled orders
  LoadMonitor* loadMonitor = nullptr;
};

struct Confirmation {
  size_t winner = 0;          ///< position in the inputs; the last one is the fallback
  bool keptFallback = true;
  double winnerRatio = 1;     ///< the winner's median round-by-round ratio to the fallback
  /// Per candidate (the fallback excluded): its median ratio to the fallback, +infinity when
  /// no round measured both.
  std::vector<double> ratios;
  std::vector<double> winnerCosts, fallbackCosts;  ///< the rounds that did not fail
  double winnerCost = 0, fallbackCost = 0;          ///< their medians (0: none)
  bool underLoad = false;                           ///< a round ran on a busy machine
  /// Wall time of the builds and the rounds; inside them, the builds' CPU time by part and
  /// the libraries' loading.
  double buildSeconds = 0, runSeconds = 0;
  double lowerCpuSeconds = 0, compileCpuSeconds = 0, linkCpuSeconds = 0, loadSeconds = 0;

  /// The decision as a log result: the winner's round costs, `confirmed` set, `details` as
  /// its `confirmation` (with the rounds, the fallback's cost and whether it stayed added).
  MeasureResult decision(nlohmann::json details, int rounds) const;
};

/// Confirms among `inputs`, whose last one is the fallback (at least two inputs). Nothing when
/// the fallback and every candidate failed every round.
std::optional<Confirmation> confirmAgainstFallback(const std::vector<MeasureInput>& inputs, Builder& builder, Runner& runner,
                                                   const ConfirmOptions& options);

}  // namespace tessel::tune
