#include "te/Tensor.h"

#include "support/Error.h"
#include <fmt/format.h>

namespace tessel::te {

Expr Tensor::operator()(std::vector<Expr> indices) const {
  TESSEL_CHECK(int(indices.size()) == ndim(), "tensor '{}' has {} dimensions but was indexed with {}", name(), ndim(),
               indices.size());
  for (auto& i : indices) {
    TESSEL_CHECK(i.type().isIntegral() && i.type().isScalar(), "tensor '{}' indexed with a {} expression", name(),
                 i.type().str());
    if (i.type() != DataType::int64()) i = ir::cast(DataType::int64(), i);
  }
  return ir::producerLoad(name(), dtype(), std::move(indices), op_);
}

static void checkShape(const std::vector<int64_t>& shape, const std::string& name) {
  for (size_t i = 0; i < shape.size(); ++i)
    TESSEL_CHECK(shape[i] > 0, "tensor '{}': dimension {} has extent {}, must be positive", name, i, shape[i]);
}

Tensor placeholder(std::vector<int64_t> shape, DataType dtype, std::string name) {
  checkShape(shape, name);
  TESSEL_CHECK(dtype.isScalar(), "placeholder '{}': vector dtype {} is not a tensor element type", name, dtype.str());
  auto op = std::make_shared<OperationNode>();
  op->kind = OperationNode::Kind::Placeholder;
  op->name = std::move(name);
  op->dtype = dtype;
  op->shape = std::move(shape);
  return Tensor(op);
}

Tensor compute(std::vector<int64_t> shape, const IndexFunction& fn, std::string name, std::string tag,
               std::vector<std::string> axisNames) {
  checkShape(shape, name);
  if (axisNames.empty())
    for (size_t i = 0; i < shape.size(); ++i) axisNames.push_back(fmt::format("i{}", i));
  TESSEL_CHECK(axisNames.size() == shape.size(), "compute '{}': {} axis names for {} dimensions", name, axisNames.size(),
               shape.size());
  auto op = std::make_shared<OperationNode>();
  op->kind = OperationNode::Kind::Compute;
  op->name = std::move(name);
  op->tag = std::move(tag);
  op->shape = shape;
  std::vector<Var> vars;
  for (size_t i = 0; i < shape.size(); ++i) {
    vars.emplace_back(axisNames[i]);
    op->axes.push_back(IterVar{vars.back(), shape[i]});
  }
  op->body = fn(vars);
  TESSEL_CHECK(op->body.defined(), "compute '{}': the index function returned nothing", op->name);
  TESSEL_CHECK(op->body.type().isScalar(), "compute '{}': element type must be scalar", op->name);
  if (op->body.type().isBool()) op->body = ir::cast(DataType::boolean(), op->body);
  op->dtype = op->body.type();
  return Tensor(op);
}

IterVar reduceAxis(int64_t extent, std::string name) {
  TESSEL_CHECK(extent > 0, "reduce axis '{}' has extent {}, must be positive", name, extent);
  return IterVar{Var(std::move(name)), extent};
}

Expr sum(Expr source, std::vector<IterVar> axes, Expr condition) {
  return ir::reduce(ir::ReduceOp::Sum, std::move(source), std::move(axes), std::move(condition));
}
Expr max(Expr source, std::vector<IterVar> axes, Expr condition) {
  return ir::reduce(ir::ReduceOp::Max, std::move(source), std::move(axes), std::move(condition));
}
Expr min(Expr source, std::vector<IterVar> axes, Expr condition) {
  return ir::reduce(ir::ReduceOp::Min, std::move(source), std::move(axes), std::move(condition));
}

}  // namespace tessel::te
