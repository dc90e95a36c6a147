#include "tune/Confirmation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>

#include "runtime/TimeEvaluator.h"
#include "support/Clock.h"
#include "support/Error.h"

namespace tessel::tune {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> finiteOnly(const std::vector<double>& values) {
  std::vector<double> finite;
  for (double c : values)
    if (std::isfinite(c)) finite.push_back(c);
  return finite;
}

double finiteMedian(const std::vector<double>& values) {
  std::vector<double> finite = finiteOnly(values);
  return finite.empty() ? std::numeric_limits<double>::infinity() : runtime::medianOf(finite);
}

}  // namespace

std::string Confirmation::confirmedLine(const std::string& winner, const std::string& fallback, int rounds) const {
  return fmt::format("{} confirmed: {:.1f}% faster than {}, the median of its ratios in {} interleaved rounds (median times "
                     "{:.4f} ms against {:.4f} ms)",
                     winner, 100 * (1 - winnerRatio), fallback, rounds, winnerCost * 1e3, fallbackCost * 1e3);
}

MeasureResult Confirmation::decision(nlohmann::json details, int rounds) const {
  MeasureResult r;
  r.costs = winnerCosts;
  r.callsPerRepeat = 0;
  r.runSeconds = runSeconds;
  r.allCost = buildSeconds + runSeconds;
  r.timestamp = unixTimeSeconds();
  r.confirmed = true;
  r.underLoad = underLoad;
  if (!details.is_object()) details = nlohmann::json::object();
  details["rounds"] = rounds;
  details["fallback_cost"] = fallbackCost;
  details["kept_fallback"] = keptFallback;
  r.confirmation = std::move(details);
  return r;
}

std::vector<size_t> pickContenders(const std::vector<SearchedCandidate>& candidates, const std::string& fallbackKey, int top,
                                   double slack) {
  TESSEL_CHECK(slack >= 1, "confirmation: the contenders' slack must be at least 1, got {}", slack);
  double fastest = 0;
  for (const auto& c : candidates) fastest = std::max(fastest, c.flopsPerSecond);
  std::vector<size_t> ranked;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].flopsPerSecond > 0 && candidates[i].flopsPerSecond * slack >= fastest && candidates[i].key != fallbackKey)
      ranked.push_back(i);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](size_t a, size_t b) { return candidates[a].flopsPerSecond > candidates[b].flopsPerSecond; });
  std::vector<size_t> picked;
  std::set<std::string> keys;
  for (size_t i : ranked) {
    if (int(picked.size()) >= top) break;
    if (keys.insert(candidates[i].key).second) picked.push_back(i);
  }
  return picked;
}

Confirmation keepFallbackWithoutRounds(double fallbackCost) {
  TESSEL_CHECK(std::isfinite(fallbackCost) && fallbackCost > 0, "confirmation: the fallback's cost must be positive, got {}",
               fallbackCost);
  Confirmation c;
  c.winner = 0;
  c.keptFallback = true;
  c.winnerCosts = c.fallbackCosts = {fallbackCost};
  c.winnerCost = c.fallbackCost = fallbackCost;
  return c;
}

std::optional<Confirmation> confirmAgainstFallback(const std::vector<MeasureInput>& inputs, Builder& builder, Runner& runner,
                                                   const ConfirmOptions& options) {
  TESSEL_CHECK(inputs.size() >= 2, "confirmation needs a candidate and the fallback, got {} inputs", inputs.size());
  TESSEL_CHECK(options.rounds >= 1, "confirmation needs at least one round, got {}", options.rounds);
  Confirmation c;
  auto start = Clock::now();
  std::vector<BuildResult> builds = buildBatch(builder, runner, inputs);
  c.buildSeconds = secondsSince(start);
  for (const BuildResult& b : builds) {
    c.lowerCpuSeconds += b.lowerSeconds;
    c.compileCpuSeconds += b.compileSeconds;
    c.linkCpuSeconds += b.linkSeconds;
  }

  // Rounds: every input once, in a fresh shuffled order each round.
  start = Clock::now();
  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<double>> costs(inputs.size());  // per input, per round (inf: failed)
  for (int round = 0; round < options.rounds; ++round) {
    std::vector<size_t> order(inputs.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<MeasureInput> roundInputs;
    std::vector<BuildResult> roundBuilds;
    for (size_t k : order) {
      roundInputs.push_back(inputs[k]);
      roundBuilds.push_back(builds[k]);
    }
    bool loaded = options.loadMonitor && options.loadMonitor->beforeRun(int(roundInputs.size()));
    std::vector<MeasureResult> measured = runner.run(roundInputs, roundBuilds);
    TESSEL_CHECK(measured.size() == order.size(), "confirmation: the runner returned {} results for {} candidates",
                 measured.size(), order.size());
    for (size_t k = 0; k < order.size(); ++k) {
      costs[order[k]].push_back(measured[k].cost());
      c.underLoad |= measured[k].underLoad || loaded;
      c.loadSeconds += measured[k].loadSeconds;
    }
  }
  c.runSeconds = secondsSince(start);
  for (const BuildResult& b : builds) builder.discard(b);

  // Round by round against the fallback: a drift in the machine's speed cancels in the ratio.
  // A winner must also have the lower median cost: under drift the two can disagree, and a
  // "faster" candidate whose typical cost is higher is no win.
  const std::vector<double>& base = costs.back();
  const double baseMedian = finiteMedian(base);
  c.winner = inputs.size() - 1;
  for (size_t k = 0; k + 1 < inputs.size(); ++k) {
    std::vector<double> ratios;
    int wins = 0;
    for (size_t r = 0; r < size_t(options.rounds); ++r) {
      if (!std::isfinite(costs[k][r]) || !std::isfinite(base[r])) continue;
      ratios.push_back(costs[k][r] / base[r]);
      wins += ratios.back() < 1;
    }
    double ratio = ratios.empty() ? std::numeric_limits<double>::infinity() : runtime::medianOf(ratios);
    c.ratios.push_back(ratio);
    bool beats = 2 * wins > options.rounds && ratio < 1 - options.margin && finiteMedian(costs[k]) < baseMedian;
    if (beats && ratio < c.winnerRatio) {
      c.winner = k;
      c.winnerRatio = ratio;
    }
  }
  c.keptFallback = c.winner == inputs.size() - 1;
  c.winnerCosts = finiteOnly(costs[c.winner]);
  c.fallbackCosts = finiteOnly(base);
  if (c.winnerCosts.empty()) return std::nullopt;  // even the fallback failed every round
  c.winnerCost = runtime::medianOf(c.winnerCosts);
  c.fallbackCost = c.fallbackCosts.empty() ? 0 : runtime::medianOf(c.fallbackCosts);
  return c;
}

}  // namespace tessel::tune
