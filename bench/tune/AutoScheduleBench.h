/// bench_tune's auto-scheduler part (`auto`): one convolution of resnet-18 auto-scheduled as
/// `tessel tune --scheduler auto` does it (its default schedule measured first, then the sketch
/// policy with the XGBoost model in batches); after each checkpoint, the schedule the tuner
/// would build then (its task confirmation against the default schedule), all of them re-timed
/// at the end in alternation with oneDNN on the same convolution (NHWC data, HWIO weights,
/// warm) and with the default schedule; and the speed of
/// the search itself: states the cost model scored per second of search, candidates measured
/// per second of the whole run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tune/MeasureBatch.h"

namespace tessel::bench {

struct AutoConvSettings {
  std::string conv = "56:64:64:3:1";   ///< input size, in and out channels, kernel, stride
  std::vector<int64_t> checkpoints = {50, 100, 200};
  size_t population = 2048;            ///< of the evolutionary search (TVM's)
  size_t batch = 16;
  uint64_t seed = 0;
  int confirmTop = 5, confirmRounds = 5;  ///< as `tessel tune --scheduler auto` confirms a task
  int retimeRounds = 10;                  ///< of the interleaved re-timing against oneDNN
};

void autoScheduledConv(const AutoConvSettings& settings, tune::Builder& builder, tune::Runner& runner);

}  // namespace tessel::bench
