#include "tune/TaskScheduler.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>

#include "support/Error.h"

namespace tessel::tune {

namespace {

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TaskScheduler::TaskScheduler(std::vector<ScheduledTask> tasks, TaskSchedulerOptions options)
    : tasks_(std::move(tasks)), options_(std::move(options)), rng_(options_.seed) {
  TESSEL_CHECK(options_.strategy == "gradient" || options_.strategy == "round-robin",
               "task scheduler: unknown strategy '{}' (gradient, round-robin)", options_.strategy);
  TESSEL_CHECK(options_.backwardWindow >= 1, "task scheduler: the backward window must be at least 1");
  size_t n = tasks_.size();
  best_.assign(n, std::numeric_limits<double>::infinity());
  trials_.assign(n, 0);
  rounds_.assign(n, 0);
  history_.assign(n, {});
  dead_.assign(n, false);
  // Similar tasks: the same tag and FLOPs within a factor of the golden ratio's power.
  std::map<std::pair<std::string, int>, int> groups;
  for (auto& t : tasks_) {
    auto key = std::make_pair(t.tag, int(std::log(t.flops + 1) / std::log(1.618)));
    group_.push_back(groups.emplace(key, int(groups.size())).first->second);
  }
}

double TaskScheduler::estimatedLatency() const {
  double total = 0;
  for (size_t i = 0; i < tasks_.size(); ++i) total += tasks_[i].weight * best_[i];
  return total;
}

double TaskScheduler::gradient(size_t i) const {
  double c = best_[i];
  // The objective is linear in each task's cost: its derivative is the weight.
  double chain = tasks_[i].weight;
  const auto& h = history_[i];
  size_t w = size_t(options_.backwardWindow);
  double backward = h.size() > w && std::isfinite(h[h.size() - 1 - w]) ? (h.back() - h[h.size() - 1 - w]) / double(w) : 0;
  double g1 = c - c / std::max(rounds_[i], 1);
  double g2 = std::numeric_limits<double>::infinity();
  int members = 0;
  double bestThroughput = 0;
  for (size_t j = 0; j < tasks_.size(); ++j)
    if (group_[j] == group_[i]) {
      ++members;
      if (std::isfinite(best_[j]) && best_[j] > 0) bestThroughput = std::max(bestThroughput, tasks_[j].flops / best_[j]);
    }
  if (members >= 2 && bestThroughput > 0) g2 = options_.beta * tasks_[i].flops / bestThroughput;
  double forward = std::min(g1, g2) - c;
  return chain * (options_.alpha * backward + (1 - options_.alpha) * forward);
}

int TaskScheduler::pickNext() {
  std::vector<size_t> alive;
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (!dead_[i]) alive.push_back(i);
  if (alive.empty()) return -1;
  // Warm-up, and the round-robin strategy: the tasks in turn.
  for (size_t i : alive)
    if (rounds_[i] == 0) return int(i);
  if (options_.strategy == "round-robin") {
    for (size_t k = 0; k < tasks_.size(); ++k) {
      size_t i = (nextRoundRobin_ + k) % tasks_.size();
      if (!dead_[i]) {
        nextRoundRobin_ = i + 1;
        return int(i);
      }
    }
  }
  if (std::bernoulli_distribution(options_.epsGreedy)(rng_))
    return int(alive[std::uniform_int_distribution<size_t>(0, alive.size() - 1)(rng_)]);
  // A task without a valid schedule yet: it blocks the estimate, so it goes first.
  for (size_t i : alive)
    if (!std::isfinite(best_[i])) return int(i);
  std::vector<size_t> argmin;
  double lowest = std::numeric_limits<double>::infinity();
  for (size_t i : alive) {
    double g = gradient(i);
    if (g < lowest) {
      lowest = g;
      argmin = {i};
    } else if (g == lowest) {
      argmin.push_back(i);
    }
  }
  if (argmin.empty()) argmin = alive;
  return int(argmin[std::uniform_int_distribution<size_t>(0, argmin.size() - 1)(rng_)]);
}

void TaskScheduler::run(int64_t totalTrials, const TuneRound& round, const std::vector<double>& resumedBest,
                        const std::vector<int64_t>& resumedTrials) {
  TESSEL_CHECK(resumedBest.empty() || resumedBest.size() == tasks_.size(), "task scheduler: {} resumed costs for {} tasks",
               resumedBest.size(), tasks_.size());
  TESSEL_CHECK(resumedTrials.empty() || resumedTrials.size() == tasks_.size(), "task scheduler: {} resumed trial counts for {} tasks",
               resumedTrials.size(), tasks_.size());
  startSeconds_ = nowSeconds();
  int64_t spent = 0;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!resumedBest.empty()) best_[i] = resumedBest[i];
    if (!resumedTrials.empty()) {
      trials_[i] = resumedTrials[i];
      spent += resumedTrials[i];
    }
  }
  if (tasks_.empty()) return;
  int64_t perRound = std::max<int64_t>(1, std::min<int64_t>(options_.trialsPerRound, totalTrials / int64_t(tasks_.size())));
  for (int next = pickNext(); next >= 0 && spent < totalTrials;) {
    size_t i = size_t(next);
    RoundResult r = round(i, std::min(perRound, totalTrials - spent));
    ++rounds_[i];
    if (r.trials <= 0) {
      dead_[i] = true;
    } else {
      spent += r.trials;
      trials_[i] += r.trials;
      best_[i] = std::min(best_[i], r.bestCost);
    }
    history_[i].push_back(best_[i]);
    next = spent < totalTrials ? pickNext() : -1;
    if (options_.tableTo) {
      std::fputs(table(next).c_str(), options_.tableTo);
      std::fflush(options_.tableTo);
    }
  }
}

std::string TaskScheduler::table(int next) const {
  std::string out = std::string(70, '-') + "\n" + std::string(30, '-') + "  [ Task Scheduler ]\n" + std::string(70, '-') + "\n";
  out += "|  ID  | Latency (ms) | Speed (GFLOPS) | Trials |\n";
  out += std::string(49, '-') + "\n";
  for (size_t i = 0; i < tasks_.size(); ++i) {
    bool valid = std::isfinite(best_[i]);
    std::string latency = valid ? fmt::format("{:.3f}", best_[i] * 1e3) : "-";
    std::string speed = valid && best_[i] > 0 ? fmt::format("{:.2f}", tasks_[i].flops / best_[i] / 1e9) : "-";
    out += fmt::format("| {:>4} | {:>12} | {:>14} | {:>6} |\n", idOf(i), latency, speed, trials_[i]);
  }
  out += std::string(49, '-') + "\n";
  int64_t total = 0;
  for (auto t : trials_) total += t;
  double latency = estimatedLatency();
  std::string left = options_.runEstimate ? options_.runEstimate->describe() : "";
  out += fmt::format("Estimated total latency: {}\tTrials: {}\tUsed time : {:.0f} s\tNext ID: {}{}\n",
                     std::isfinite(latency) ? fmt::format("{:.3f} ms", latency * 1e3) : std::string("-"), total,
                     nowSeconds() - startSeconds_, next < 0 ? std::string("-1") : std::to_string(idOf(size_t(next))),
                     left.empty() ? "" : "\tRun: " + left);
  return out;
}

}  // namespace tessel::tune
