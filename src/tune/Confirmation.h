/// The confirmation that ends a task's search, shared by template tuning and the
/// auto-scheduler: the best candidates and the default schedule (the fallback) are built once
/// and measured again in rounds, interleaved in a fresh shuffled order each round, so that a
/// drift in the machine's speed hits them alike. A candidate replaces the fallback only if,
/// compared round by round with it, it is faster in most rounds, its median ratio to it is
/// below 1 - margin, and its median cost is lower. The search's own costs, each measured at a
/// different moment, cannot tell a 1% gain from the machine's drift; this can.
#pragma once
#include <optional>
#include <string>
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

  /// The line a run prints when a candidate replaced the fallback: the round-by-round figure
  /// the decision rests on first, the medians after, so that equal medians beside "6.5% faster"
  /// do not read as a contradiction. "config 83 confirmed: 10.3% faster than the default, the
  /// median of its ratios in 5 interleaved rounds (median times 1.7586 ms against 1.9570 ms)"
  std::string confirmedLine(const std::string& winner, const std::string& fallback, int rounds) const;
};

/// A measured schedule as the confirmation picks its contenders: a key that identifies it
/// (a config index, a step list's text) and its throughput in the search (0: failed).
struct SearchedCandidate {
  std::string key;
  double flopsPerSecond = 0;
};

/// Which of the searched candidates to re-measure against the fallback (keyed `fallbackKey`):
/// the `top` fastest distinct ones other than the fallback, leaving out any more than `slack`
/// times slower than the fastest measured (the fallback's own search measurement included).
/// Such a candidate cannot win rounds it must win by a margin, and re-measuring a random
/// schedule hundreds of times slower than the best made confirmation most of an
/// auto-scheduled network's measuring time. Positions in `candidates`, fastest first.
inline constexpr double kContenderSlack = 1.5;
std::vector<size_t> pickContenders(const std::vector<SearchedCandidate>& candidates, const std::string& fallbackKey, int top,
                                   double slack = kContenderSlack);

/// The decision when no candidate is a contender: the fallback, which the search measured
/// fastest by more than the slack, stays at its search cost, with no rounds. As a
/// Confirmation whose only input is the fallback (winner 0), so that it is logged like one.
Confirmation keepFallbackWithoutRounds(double fallbackCost);

/// Confirms among `inputs`, whose last one is the fallback (at least two inputs). Nothing when
/// the fallback and every candidate failed every round.
std::optional<Confirmation> confirmAgainstFallback(const std::vector<MeasureInput>& inputs, Builder& builder, Runner& runner,
                                                   const ConfirmOptions& options);

}  // namespace tessel::tune
