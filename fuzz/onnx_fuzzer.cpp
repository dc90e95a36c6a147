// libFuzzer harness: ONNX model files (graph/frontends/Onnx.h). Bytes either fail with an Error
// or give a graph that the reference interpreter runs on small inputs (a damaged extent must
// not reach an operator unchecked).
#include <cstdint>
#include <string>

#include "graph/Interpreter.h"
#include "graph/frontends/Onnx.h"
#include "support/Error.h"

using namespace tessel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    graph::Graph g = graph::importOnnxBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
    std::map<std::string, runtime::Tensor> inputs;
    for (int id : g.inputIds()) {
      const auto& type = g.node(id).type;
      int64_t n = 1;
      for (int64_t d : type.shape) n = d > 4096 ? 4097 : n * d;
      // Large inputs (an extent changed into millions) only cost time: the import was the test.
      if (n > 4096 || type.dtype != DataType::float32()) return 0;
      auto t = runtime::Tensor::empty(type.shape, type.dtype);
      for (int64_t i = 0; i < n; ++i) t.dataAs<float>()[i] = float(i % 5) - 2;
      inputs[g.node(id).name] = t;
    }
    // A damaged attribute can make a value large (a resize to 2^20 x 2^20) with small inputs:
    // such graphs imported correctly, and interpreting them would only exhaust memory.
    for (const auto& n : g.nodes()) {
      int64_t elements = 1;
      for (int64_t d : n.type.shape) elements = d > (int64_t(1) << 20) ? (int64_t(1) << 21) : elements * d;
      if (elements > (int64_t(1) << 20)) return 0;
    }
    graph::interpretGraph(g, inputs);
  } catch (const Error&) {
  }
  return 0;
}
