// libFuzzer harness: graph plans (graph.json of a module). Each input is a plan for a real
// module built once at start-up (three kernels: a matmul, an add, a relu). Loading either fails
// with an Error or gives an executor whose every value is defined before use; that executor
// then runs, which must be memory-safe whatever the plan said.
#include <cstdint>
#include <string>

#include "graph/Build.h"
#include "graph/OpRegistry.h"
#include "runtime/GraphExecutor.h"
#include "support/Files.h"
#include "support/Error.h"
#include "support/TempDir.h"

using namespace tessel;

namespace {

struct Fixture {
  TempDir dir{"tessel-fuzz-plan"};
  runtime::Module module;
  runtime::NamedTensors params;
};

te::Tensor elementwise(const std::vector<te::Tensor>& in, const std::string& name, bool add) {
  return te::compute(in[0].shape(), [&](const std::vector<ir::Var>& i) {
    std::vector<ir::Expr> idx(i.begin(), i.end());
    return add ? in[0](idx) + in[1](idx) : ir::max(in[0](idx), ir::Expr(0.0f));
  }, name, "elemwise");
}

Fixture* fixture() {
  static Fixture* f = [] {
    auto* made = new Fixture;
    graph::registerOp({"fuzz_add", graph::OpPattern::ElemWise, 2, 2,
                       [](const std::vector<te::Tensor>& in, const graph::Attrs&) { return elementwise(in, "T_add", true); }});
    graph::registerOp({"fuzz_relu", graph::OpPattern::ElemWise, 1, 1,
                       [](const std::vector<te::Tensor>& in, const graph::Attrs&) { return elementwise(in, "T_relu", false); }});
    graph::registerOp({"fuzz_matmul", graph::OpPattern::OutEWiseFusable, 2, 2,
                       [](const std::vector<te::Tensor>& in, const graph::Attrs&) {
                         auto k = te::reduceAxis(in[0].shape()[1], "k");
                         return te::compute({in[0].shape()[0], in[1].shape()[1]}, [&](const std::vector<ir::Var>& i) {
                           return te::sum(in[0](i[0], k.var) * in[1](k.var, i[1]), {k});
                         }, "T_matmul", "matmul");
                       }});
    graph::Graph g;
    int x = g.addInput("data", {{2, 4}, DataType::float32()});
    auto w = runtime::Tensor::empty({4, 4}, DataType::float32());
    for (int i = 0; i < 16; ++i) w.dataAs<float>()[i] = float(i % 5) - 2.0f;
    int product = g.addOp("fuzz_matmul", {x, g.addConstant("w", w)});
    g.markOutput(g.addOp("fuzz_relu", {g.addOp("fuzz_add", {product, product})}));
    graph::BuildOptions options;
    options.fuse = false;
    std::string dir = made->dir.path() + "/module";
    graph::buildGraph(g, dir, options);
    made->module = runtime::Module::load(dir + "/kernels.so");
    made->params = runtime::loadParams(dir + "/params.bin");
    return made;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture* f = fixture();
  try {
    auto executor = runtime::GraphExecutor::fromPlanText(f->module, std::string_view(reinterpret_cast<const char*>(data), size),
                                                         f->params, "fuzz");
    executor.setZeroInputs();
    executor.run();
    for (int i = 0; i < executor.numOutputs(); ++i) (void)executor.getOutput(i);
  } catch (const Error&) {
  }
  return 0;
}
