#include "tune/RunEstimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tessel::tune {

RunEstimate::RunEstimate(int64_t plannedTrials) : planned_(std::max<int64_t>(plannedTrials, 0)), start_(std::chrono::steady_clock::now()) {}

void RunEstimate::measured(int64_t trials) { measured_ += std::max<int64_t>(trials, 0); }

void RunEstimate::shortened(int64_t trials) { planned_ = std::max<int64_t>(planned_ - std::max<int64_t>(trials, 0), measured_); }

int64_t RunEstimate::remainingTrials() const { return std::max<int64_t>(planned_ - measured_, 0); }

double RunEstimate::remainingSeconds() const {
  if (measured_ == 0) return -1;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return elapsed / double(measured_) * double(remainingTrials());
}

std::string RunEstimate::describe() const {
  if (measured_ == 0) return "";
  int64_t left = remainingTrials();
  if (left == 0) return "no trials left";
  return fmt::format("about {} left ({} trial{})", roughDuration(remainingSeconds()), left, left == 1 ? "" : "s");
}

std::string roughDuration(double seconds) {
  auto s = int64_t(std::llround(std::max(seconds, 0.0)));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
  return fmt::format("{} d {} h", s / 86400, s % 86400 / 3600);
}

}  // namespace tessel::tune
