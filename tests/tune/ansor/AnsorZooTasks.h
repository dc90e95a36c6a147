/// Test support: the zoo's tasks the auto-scheduler tests work on — a 3x3 convolution with its
/// bias and relu epilogue (resnet-18), a depthwise convolution (mobilenet), the classifier's
/// dense layer and its softmax — at small image sizes, in the NHWC layout the CPU tunes or the
/// NCHW layout of GPU builds.
#pragma once
#include <string>
#include <vector>

#include "ops/Layout.h"
#include "te/ComputeDAG.h"

namespace tessel::ansortest {

struct ZooTask {
  std::string what;  ///< "conv2d (resnet-18 task 2)"
  te::ComputeDAG dag;
};

/// At 32 pixels; `classes` sets the classifier's outputs (the dense layer's and the softmax's
/// length).
std::vector<ZooTask> zooTasks(ops::Layout layout = ops::Layout::NHWC, int classes = 10);

}  // namespace tessel::ansortest
