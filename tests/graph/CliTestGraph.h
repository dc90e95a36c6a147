/// Test support for the command tests: the graph their modules are built from, data [1, 8]
/// times diag(0, 9, 18, ..., 63), whose top-5 classes for an input of ones are known (7: 63,
/// 6: 54, ...).
#pragma once
#include "graph/Graph.h"
#include "graph/TestOps.h"

namespace tessel::graph::testsupport {

inline Graph diagonalMatmulGraph() {
  testops::registerFusionTestOps();
  Graph g;
  int x = g.addInput("data", {{1, 8}, DataType::float32()});
  auto w = runtime::Tensor::empty({8, 8}, DataType::float32());
  for (int i = 0; i < 64; ++i) w.dataAs<float>()[i] = (i % 9 == 0) ? float(i) : 0.0f;  // diag(0, 9, 18, ...)
  g.markOutput(g.addOp("fz_matmul", {x, g.addConstant("w", w)}));
  return g;
}

}  // namespace tessel::graph::testsupport
