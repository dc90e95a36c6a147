/// Test support: the zoo's tasks the auto-scheduler tests work on — a 3x3 convolution with its
/// bias and relu epilogue (resnet-18), a depthwise convolution (mobilenet), the classifier's
/// dense layer and its softmax — at small image sizes, in the NHWC layout the CPU tunes.
#pragma once
#include <string>
#include <vector>

#include "te/ComputeDAG.h"

namespace tessel::ansortest {

struct ZooTask {
  std::string what;  ///< "conv2d (resnet-18 task 2)"
  te::ComputeDAG dag;
};

std::vector<ZooTask> zooTasks();

}  // namespace tessel::ansortest
