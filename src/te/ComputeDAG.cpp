#include "te/ComputeDAG.h"

#include <functional>
#include <set>
#include <unordered_map>

#include "ir/Mutator.h"
#include "ir/Printer.h"
#include "support/Error.h"
#include "support/Hash.h"

namespace tessel::te {

namespace {

/// Collects reads of other tensors, skipping nothing (indices may themselves read tensors).
class AccessCollector : public ir::IRVisitor {
 public:
  void visit(const Expr& e) override {
    if (!e.defined()) return;
    if (auto p = e.as<ir::ProducerLoadNode>()) accesses.push_back({p->producer, p->indices});
    IRVisitor::visit(e);
  }
  std::vector<TensorAccess> accesses;
};

/// Operations read by an expression, by identity (before names are made unique).
void collectProducers(const Expr& e, std::vector<Operation>& out) {
  struct V : ir::IRVisitor {
    std::vector<Operation>* out;
    void visit(const Expr& x) override {
      if (!x.defined()) return;
      if (auto p = x.as<ir::ProducerLoadNode>()) {
        TESSEL_ICHECK(p->identity != nullptr);
        out->push_back(std::static_pointer_cast<const OperationNode>(p->identity));
      }
      IRVisitor::visit(x);
    }
  } v;
  v.out = &out;
  v.visit(e);
}

class ReduceChecker : public ir::IRVisitor {
 public:
  void visit(const Expr& e) override {
    if (e.defined() && e.as<ir::ReduceNode>()) found = true;
    IRVisitor::visit(e);
  }
  bool found = false;
};

class RenameReads : public ir::IRMutator {
 public:
  explicit RenameReads(const std::unordered_map<const void*, std::string>& n) : names(n) {}
  Expr visitProducerLoad(const Expr& e, const ir::ProducerLoadNode* p) override {
    std::vector<Expr> idx;
    for (auto& i : p->indices) idx.push_back(mutate(i));
    auto it = names.find(p->identity.get());
    TESSEL_ICHECK(it != names.end());
    return ir::producerLoad(it->second, e.type(), idx, nullptr);
  }
  const std::unordered_map<const void*, std::string>& names;
};

}  // namespace

ComputeDAG::ComputeDAG(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs) {
  TESSEL_CHECK(!outputs.empty(), "a compute DAG needs at least one output tensor");
  // Depth-first post-order from the outputs gives a topological order.
  std::vector<Operation> order;
  std::set<const OperationNode*> visited, onStack;
  std::function<void(const Operation&)> visit = [&](const Operation& op) {
    if (visited.count(op.get())) return;
    TESSEL_CHECK(!onStack.count(op.get()), "compute '{}' depends on itself", op->name);
    onStack.insert(op.get());
    if (!op->isPlaceholder()) {
      std::vector<Operation> producers;
      if (auto r = op->reduction()) {
        collectProducers(r->source, producers);
        if (r->condition.defined()) collectProducers(r->condition, producers);
        ReduceChecker inner;
        inner.visit(r->source);
        TESSEL_CHECK(!inner.found, "compute '{}': nested reductions are not supported", op->name);
      } else {
        collectProducers(op->body, producers);
        ReduceChecker inner;
        inner.visit(op->body);
        TESSEL_CHECK(!inner.found, "compute '{}': a reduction must be the whole body (sum(...), not sum(...) * x); "
                                   "compute the reduction as its own tensor", op->name);
      }
      for (auto& p : producers) visit(p);
    }
    onStack.erase(op.get());
    visited.insert(op.get());
    order.push_back(op);
  };
  for (auto& in : inputs) visit(in.op());
  for (auto& out : outputs) visit(out.op());

  // Unique names, in topological order: the first keeps its name, later ones get _1, _2, ...
  std::unordered_map<const void*, std::string> names;
  std::set<std::string> taken;
  for (auto& op : order) {
    std::string name = op->name;
    for (int k = 1; taken.count(name); ++k) name = op->name + "_" + std::to_string(k);
    taken.insert(name);
    names[op.get()] = name;
  }
  RenameReads rename(names);
  for (auto& op : order) {
    auto copy = std::make_shared<OperationNode>(*op);
    copy->name = names[op.get()];
    if (!copy->isPlaceholder()) copy->body = rename.mutate(copy->body);
    ops_.push_back(copy);
  }
  std::set<std::string> inputSet;
  for (auto& in : inputs) {
    TESSEL_CHECK(in.op()->isPlaceholder(), "input '{}' is not a placeholder", in.name());
    inputs_.push_back(names[in.op().get()]);
    inputSet.insert(inputs_.back());
  }
  for (auto& op : ops_)
    if (op->isPlaceholder() && !inputSet.count(op->name)) inputs_.push_back(op->name);
  for (auto& out : outputs) {
    TESSEL_CHECK(!out.op()->isPlaceholder(), "output '{}' is a placeholder, not a computation", out.name());
    outputs_.push_back(names[out.op().get()]);
  }
}

ComputeDAG ComputeDAG::fromParts(std::vector<Operation> ops, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  TESSEL_CHECK(!outputs.empty(), "a compute DAG needs at least one output tensor");
  std::unordered_map<std::string, size_t> index;
  std::vector<bool> read(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    TESSEL_CHECK(index.emplace(ops[i]->name, i).second, "op '{}' is defined twice", ops[i]->name);
    for (const TensorAccess& a : accesses(*ops[i])) {
      auto it = index.find(a.producer);
      TESSEL_CHECK(it != index.end() && it->second < i, "op '{}' reads '{}', which is not defined before it", ops[i]->name, a.producer);
      read[it->second] = true;
    }
  }
  std::set<std::string> inputSet(inputs.begin(), inputs.end()), outputSet(outputs.begin(), outputs.end());
  TESSEL_CHECK(inputSet.size() == inputs.size(), "an input is listed twice");
  TESSEL_CHECK(outputSet.size() == outputs.size(), "an output is listed twice");
  for (const std::string& name : inputs) {
    auto it = index.find(name);
    TESSEL_CHECK(it != index.end() && ops[it->second]->isPlaceholder(), "input '{}' is not a placeholder of the DAG", name);
  }
  for (const std::string& name : outputs) {
    auto it = index.find(name);
    TESSEL_CHECK(it != index.end() && !ops[it->second]->isPlaceholder(), "output '{}' is not a computation of the DAG", name);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->isPlaceholder()) {
      TESSEL_CHECK(inputSet.count(ops[i]->name), "placeholder '{}' is not listed as an input", ops[i]->name);
    } else {
      TESSEL_CHECK(read[i] || outputSet.count(ops[i]->name), "op '{}' is neither an output nor read by another op", ops[i]->name);
    }
  }
  ComputeDAG dag;
  dag.ops_ = std::move(ops);
  dag.inputs_ = std::move(inputs);
  dag.outputs_ = std::move(outputs);
  return dag;
}

int ComputeDAG::opIndex(const std::string& name) const {
  for (size_t i = 0; i < ops_.size(); ++i)
    if (ops_[i]->name == name) return int(i);
  return -1;
}

const Operation& ComputeDAG::op(const std::string& name) const {
  int i = opIndex(name);
  TESSEL_CHECK(i >= 0, "no tensor named '{}' in the compute DAG", name);
  return ops_[size_t(i)];
}

bool ComputeDAG::isOutput(const std::string& name) const {
  return std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end();
}

std::vector<TensorAccess> ComputeDAG::accesses(const OperationNode& op) {
  AccessCollector c;
  if (!op.isPlaceholder()) c.visit(op.body);
  return c.accesses;
}

std::vector<std::string> ComputeDAG::consumers(const std::string& name) const {
  std::vector<std::string> result;
  for (auto& op : ops_) {
    for (auto& a : accesses(*op)) {
      if (a.producer == name) {
        result.push_back(op->name);
        break;
      }
    }
  }
  return result;
}

namespace {

/// Counts data arithmetic (not index arithmetic, not reads) in an expression.
double countOps(const Expr& e) {
  if (!e.defined()) return 0;
  switch (e.kind()) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::FloatImm:
    case ir::ExprKind::Var:
    case ir::ExprKind::ProducerLoad:
    case ir::ExprKind::Load: return 0;
    case ir::ExprKind::Cast: return countOps(e.as<ir::CastNode>()->value);
    case ir::ExprKind::Select:
    case ir::ExprKind::IfThenElse: {
      auto s = static_cast<const ir::SelectNode*>(e.get());
      return countOps(s->trueValue) + countOps(s->falseValue);
    }
    case ir::ExprKind::Call: {
      double n = 1;
      for (auto& a : e.as<ir::CallNode>()->args) n += countOps(a);
      return n;
    }
    default: break;
  }
  if (e.kind() >= ir::ExprKind::Add && e.kind() <= ir::ExprKind::Or) {
    auto b = static_cast<const ir::BinaryNode*>(e.get());
    bool dataOp = b->a.type() != DataType::int64() && !b->a.type().isBool();
    return (dataOp ? 1 : 0) + countOps(b->a) + countOps(b->b);
  }
  return 0;
}

}  // namespace

double operationFlops(const OperationNode& op) {
  if (op.isPlaceholder()) return 0;
  double points = 1;
  for (auto s : op.shape) points *= double(s);
  if (auto r = op.reduction()) {
    double iterations = 1;
    for (auto& a : r->axes) iterations *= double(a.extent);
    return points * iterations * (countOps(r->source) + 1);
  }
  return points * countOps(op.body);
}

double ComputeDAG::flopCount() const {
  double total = 0;
  for (auto& op : ops_) total += operationFlops(*op);
  return total;
}

std::string ComputeDAG::workloadKey() const {
  StableHasher h;
  std::unordered_map<std::string, int64_t> opNumber;
  for (size_t i = 0; i < ops_.size(); ++i) opNumber[ops_[i]->name] = int64_t(i);
  for (auto& op : ops_) {
    h.add(int64_t(op->kind == OperationNode::Kind::Placeholder ? 1 : 2));
    h.add(op->dtype.str());
    h.add(int64_t(op->shape.size()));
    for (auto s : op->shape) h.add(s);
    h.add(int64_t(isOutput(op->name)));
    if (op->isPlaceholder()) continue;
    // Variables are numbered in order of appearance, so names never matter.
    std::unordered_map<const ir::VarNode*, int64_t> varNumber;
    for (auto& a : op->axes) varNumber[a.var.node()] = int64_t(varNumber.size());
    if (auto r = op->reduction())
      for (auto& a : r->axes) {
        varNumber[a.var.node()] = int64_t(varNumber.size());
        h.add(a.extent);
      }
    std::function<void(const Expr&)> hashExpr = [&](const Expr& e) {
      if (!e.defined()) {
        h.add(int64_t(-1));
        return;
      }
      h.add(int64_t(e.kind()));
      h.add(e.type().str());
      switch (e.kind()) {
        case ir::ExprKind::IntImm: h.add(e.as<ir::IntImmNode>()->value); break;
        case ir::ExprKind::FloatImm: h.add(e.as<ir::FloatImmNode>()->value); break;
        case ir::ExprKind::Var: {
          auto it = varNumber.find(e.as<ir::VarNode>());
          h.add(it == varNumber.end() ? int64_t(-2) : it->second);
          break;
        }
        case ir::ExprKind::ProducerLoad: h.add(opNumber.at(e.as<ir::ProducerLoadNode>()->producer)); break;
        case ir::ExprKind::Call: h.add(int64_t(e.as<ir::CallNode>()->op)); break;
        case ir::ExprKind::Reduce: h.add(int64_t(e.as<ir::ReduceNode>()->op)); break;
        default: break;
      }
      ir::forEachChild(e, hashExpr);
    };
    hashExpr(op->body);
  }
  return h.hex();
}

std::string operationToString(const OperationNode& op) {
  if (op.isPlaceholder()) {
    std::string s = op.name + " = PLACEHOLDER [";
    for (size_t i = 0; i < op.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(op.shape[i]);
    return s + "]";
  }
  std::string s = op.name + "(";
  for (size_t i = 0; i < op.axes.size(); ++i) s += (i ? ", " : "") + op.axes[i].var.name();
  s += ")";
  if (auto r = op.reduction()) {
    const char* assign = r->op == ir::ReduceOp::Sum ? " += " : (r->op == ir::ReduceOp::Max ? " max= " : " min= ");
    s += assign + ir::toString(r->source);
    if (r->condition.defined()) s += " where " + ir::toString(r->condition);
    return s;
  }
  return s + " = " + ir::toString(op.body);
}

std::string ComputeDAG::toString() const {
  std::string s;
  for (auto& op : ops_) s += operationToString(*op) + "\n";
  return s;
}

}  // namespace tessel::te
