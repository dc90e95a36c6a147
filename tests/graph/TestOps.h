/// Small operators registered by the graph tests, so that the graph layer is tested apart
/// from the operator library: fz_add and fz_relu (elementwise), fz_transpose (injective),
/// fz_matmul (out_elemwise_fusable).
#pragma once
#include "graph/OpRegistry.h"

namespace tessel::graph::testops {

inline te::Tensor elementwise(const std::vector<te::Tensor>& in, const std::string& name,
                       const std::function<ir::Expr(const std::vector<ir::Expr>&)>& f) {
  return te::compute(in[0].shape(), [&](const std::vector<ir::Var>& i) {
    std::vector<ir::Expr> idx(i.begin(), i.end());
    std::vector<ir::Expr> reads;
    for (auto& t : in) reads.push_back(t(idx));
    return f(reads);
  }, name, "elemwise");
}

inline void registerFusionTestOps() {
  OpDef add{"fz_add", OpPattern::ElemWise, 2, 2,
            [](const std::vector<te::Tensor>& in, const Attrs&) {
              return elementwise(in, "T_add", [](const std::vector<ir::Expr>& r) { return r[0] + r[1]; });
            }};
  registerOp(add);
  OpDef relu{"fz_relu", OpPattern::ElemWise, 1, 1,
             [](const std::vector<te::Tensor>& in, const Attrs&) {
               return elementwise(in, "T_relu", [](const std::vector<ir::Expr>& r) { return ir::max(r[0], ir::Expr(0.0f)); });
             }};
  registerOp(relu);
  OpDef transpose{"fz_transpose", OpPattern::Injective, 1, 1,
                  [](const std::vector<te::Tensor>& in, const Attrs&) {
                    return te::compute({in[0].shape()[1], in[0].shape()[0]},
                                       [&](const std::vector<ir::Var>& i) { return in[0](i[1], i[0]); }, "T_transpose",
                                       "injective");
                  }};
  registerOp(transpose);
  OpDef matmul{"fz_matmul", OpPattern::OutEWiseFusable, 2, 2,
               [](const std::vector<te::Tensor>& in, const Attrs&) {
                 auto r = te::reduceAxis(in[0].shape()[1], "k");
                 return te::compute({in[0].shape()[0], in[1].shape()[1]},
                                    [&](const std::vector<ir::Var>& i) { return te::sum(in[0](i[0], r.var) * in[1](r.var, i[1]), {r}); },
                                    "T_matmul", "dense");
               }};
  registerOp(matmul);
}

}  // namespace tessel::graph::testops
