/// Tensor expressions: the user's description of *what* to compute. A `placeholder` is an
/// input; a `compute` defines each element of a new tensor by an index lambda, possibly with a
/// reduction (`sum`, `max`, `min`) over reduce axes. Schedules later decide *how*.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/Expr.h"

namespace tessel::te {

using ir::Expr;
using ir::IterVar;
using ir::Var;

struct OperationNode {
  enum class Kind { Placeholder, Compute };
  Kind kind = Kind::Placeholder;
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<IterVar> axes;  ///< compute: one data-parallel axis per output dimension
  Expr body;                  ///< compute: the element at `axes`; a Reduce at the top for reductions
  std::string tag;            ///< what the op is ("conv2d_nchw", "elemwise", ...), for templates and printing

  bool isPlaceholder() const { return kind == Kind::Placeholder; }
  const ir::ReduceNode* reduction() const { return body.defined() ? body.as<ir::ReduceNode>() : nullptr; }
};
using Operation = std::shared_ptr<const OperationNode>;

/// The output of an operation. Calling it with indices reads an element.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Operation op) : op_(std::move(op)) {}
  const Operation& op() const { return op_; }
  const std::string& name() const { return op_->name; }
  DataType dtype() const { return op_->dtype; }
  const std::vector<int64_t>& shape() const { return op_->shape; }
  int ndim() const { return int(op_->shape.size()); }
  Expr operator()(std::vector<Expr> indices) const;
  template <class... I>
  Expr operator()(I... indices) const {
    return (*this)(std::vector<Expr>{Expr(indices)...});
  }

 private:
  Operation op_;
};

Tensor placeholder(std::vector<int64_t> shape, DataType dtype = DataType::float32(), std::string name = "placeholder");

using IndexFunction = std::function<Expr(const std::vector<Var>&)>;
/// A new tensor of `shape` whose element at index vector v is fn(v). `axisNames` defaults to
/// i0, i1, ...; `tag` says what the op is.
Tensor compute(std::vector<int64_t> shape, const IndexFunction& fn, std::string name, std::string tag = "",
               std::vector<std::string> axisNames = {});

/// A reduction axis over [0, extent).
IterVar reduceAxis(int64_t extent, std::string name);

Expr sum(Expr source, std::vector<IterVar> axes, Expr condition = Expr());
Expr max(Expr source, std::vector<IterVar> axes, Expr condition = Expr());
Expr min(Expr source, std::vector<IterVar> axes, Expr condition = Expr());

}  // namespace tessel::te
