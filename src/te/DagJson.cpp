#include "te/DagJson.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "support/Error.h"
#include "support/Json.h"

namespace tessel::te {

namespace {

using nlohmann::json;
using ir::ExprKind;

// Binary operators by their JSON names; one table for both directions.
constexpr std::pair<ExprKind, const char*> kBinaryNames[] = {
    {ExprKind::Add, "add"}, {ExprKind::Sub, "sub"}, {ExprKind::Mul, "mul"}, {ExprKind::Div, "div"},
    {ExprKind::Mod, "mod"}, {ExprKind::FloorDiv, "floordiv"}, {ExprKind::FloorMod, "floormod"},
    {ExprKind::Min, "min"}, {ExprKind::Max, "max"}, {ExprKind::EQ, "eq"}, {ExprKind::NE, "ne"},
    {ExprKind::LT, "lt"}, {ExprKind::LE, "le"}, {ExprKind::GT, "gt"}, {ExprKind::GE, "ge"},
    {ExprKind::And, "and"}, {ExprKind::Or, "or"},
};
constexpr ir::Intrinsic kIntrinsics[] = {ir::Intrinsic::Exp,   ir::Intrinsic::Log,   ir::Intrinsic::Sqrt,  ir::Intrinsic::Tanh,
                                         ir::Intrinsic::Sigmoid, ir::Intrinsic::Erf, ir::Intrinsic::Pow,   ir::Intrinsic::Abs,
                                         ir::Intrinsic::Floor, ir::Intrinsic::Ceil,  ir::Intrinsic::Round, ir::Intrinsic::Rsqrt};
constexpr ir::ReduceOp kReduceOps[] = {ir::ReduceOp::Sum, ir::ReduceOp::Max, ir::ReduceOp::Min};

const char* binaryName(ExprKind kind) {
  for (auto [k, name] : kBinaryNames)
    if (k == kind) return name;
  return nullptr;
}

json floatValue(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// ---- writing ---------------------------------------------------------------------------------

class Writer {
 public:
  explicit Writer(std::unordered_map<const ir::VarNode*, int> vars) : vars_(std::move(vars)) {}

  json expr(const Expr& e) const {
    TESSEL_ICHECK(e.defined());
    switch (e.kind()) {
      case ExprKind::IntImm: {
        int64_t v = e.as<ir::IntImmNode>()->value;
        if (e.type() == DataType::int64()) return v;
        return json::array({"int", e.type().str(), v});
      }
      case ExprKind::FloatImm: return json::array({"float", e.type().str(), floatValue(e.as<ir::FloatImmNode>()->value)});
      case ExprKind::Var: {
        auto it = vars_.find(e.as<ir::VarNode>());
        TESSEL_CHECK(it != vars_.end(), "variable '{}' is not an axis of its op", e.as<ir::VarNode>()->name);
        return json::array({"var", it->second});
      }
      case ExprKind::Not: return json::array({"not", expr(e.as<ir::NotNode>()->a)});
      case ExprKind::Select:
      case ExprKind::IfThenElse: {
        auto s = static_cast<const ir::SelectNode*>(e.get());
        return json::array({e.kind() == ExprKind::Select ? "select" : "if_then_else", expr(s->condition), expr(s->trueValue),
                            expr(s->falseValue)});
      }
      case ExprKind::Cast: return json::array({"cast", e.type().str(), expr(e.as<ir::CastNode>()->value)});
      case ExprKind::Call: {
        auto c = e.as<ir::CallNode>();
        json j = json::array({"call", ir::intrinsicName(c->op)});
        for (auto& a : c->args) j.push_back(expr(a));
        return j;
      }
      case ExprKind::ProducerLoad: {
        auto p = e.as<ir::ProducerLoadNode>();
        json j = json::array({"load", p->producer});
        for (auto& i : p->indices) j.push_back(expr(i));
        return j;
      }
      case ExprKind::Reduce: {
        auto r = e.as<ir::ReduceNode>();
        json axes = json::array();
        for (auto& a : r->axes) axes.push_back(vars_.at(a.var.node()));
        return json::array({"reduce", ir::reduceOpName(r->op), expr(r->source), axes,
                            r->condition.defined() ? expr(r->condition) : json(nullptr)});
      }
      default: break;
    }
    if (const char* name = binaryName(e.kind())) {
      auto b = static_cast<const ir::BinaryNode*>(e.get());
      return json::array({name, expr(b->a), expr(b->b)});
    }
    fail("a compute DAG cannot hold a lowered node (expression kind {})", int(e.kind()));
  }

 private:
  std::unordered_map<const ir::VarNode*, int> vars_;
};

// ---- reading ---------------------------------------------------------------------------------

// Deeper than any operator tessel builds by far; a bound keeps a hostile file from
// exhausting the stack of the reader (and of every pass after it).
constexpr int kMaxDepth = 256;

DataType scalarType(const json& j, const std::string& where) {
  DataType t;
  try {
    t = DataType::parse(jsonString(j, where));
  } catch (const Error& e) {
    throw e.withContext(where);
  }
  TESSEL_CHECK(t.isScalar(), "{}: a tensor expression is scalar, got {}", where, t.str());
  return t;
}

class Reader {
 public:
  Reader(const std::map<std::string, Operation>& producers, std::vector<ir::IterVar> vars)
      : producers_(producers), vars_(std::move(vars)) {}

  Expr expr(const json& j, int depth) const {
    TESSEL_CHECK(depth <= kMaxDepth, "expressions nest deeper than {}", kMaxDepth);
    if (j.is_number_integer() || j.is_number_unsigned()) return ir::intImm(DataType::int64(), jsonInteger(j, "an integer constant"));
    TESSEL_CHECK(j.is_array() && !j.empty() && j[0].is_string(), "expected an integer or an array headed by a node kind, got {}",
                 jsonEcho(j));
    std::string kind = j[0].get<std::string>();
    auto arity = [&](size_t n) {
      TESSEL_CHECK(j.size() == n + 1, "'{}' takes {} operand{}, got {}", kind, n, n == 1 ? "" : "s", j.size() - 1);
    };
    auto sub = [&](size_t i) { return expr(j[i], depth + 1); };
    if (kind == "int") {
      arity(2);
      DataType t = scalarType(j[1], "int type");
      TESSEL_CHECK(t.isIntegral(), "'int' constant of non-integer type {}", t.str());
      return ir::intImm(t, jsonInteger(j[2], "int value"));
    }
    if (kind == "float") {
      arity(2);
      DataType t = scalarType(j[1], "float type");
      TESSEL_CHECK(t.isFloat(), "'float' constant of non-float type {}", t.str());
      double v = 0;
      if (j[2].is_string()) {
        std::string s = j[2].get<std::string>();
        TESSEL_CHECK(s == "inf" || s == "-inf" || s == "nan", "float value '{}' (expected a number, inf, -inf or nan)", s);
        v = s == "nan" ? std::numeric_limits<double>::quiet_NaN() : (s == "inf" ? 1 : -1) * std::numeric_limits<double>::infinity();
      } else {
        v = jsonNumber(j[2], "float value");
      }
      return ir::floatImm(t, v);
    }
    if (kind == "var") {
      arity(1);
      int64_t k = jsonInteger(j[1], "var index", 0, int64_t(vars_.size()) - 1);
      return vars_[size_t(k)].var;
    }
    if (kind == "not") {
      arity(1);
      Expr a = sub(1);
      TESSEL_CHECK(a.type().isBool(), "'not' of a {} operand", a.type().str());
      return !a;
    }
    if (kind == "select" || kind == "if_then_else") {
      arity(3);
      return kind == "select" ? ir::select(sub(1), sub(2), sub(3)) : ir::ifThenElse(sub(1), sub(2), sub(3));
    }
    if (kind == "cast") {
      arity(2);
      return ir::cast(scalarType(j[1], "cast type"), sub(2));
    }
    if (kind == "call") {
      TESSEL_CHECK(j.size() >= 3 && j[1].is_string(), "'call' needs an intrinsic name and arguments");
      std::string name = j[1].get<std::string>();
      for (ir::Intrinsic op : kIntrinsics) {
        if (name != ir::intrinsicName(op)) continue;
        std::vector<Expr> args;
        for (size_t i = 2; i < j.size(); ++i) args.push_back(sub(i));
        TESSEL_CHECK(op == ir::Intrinsic::Pow ? args.size() == 2 : args.size() == 1, "'{}' with {} arguments", name, args.size());
        return ir::call(op, std::move(args));
      }
      fail("unknown intrinsic '{}'", name);
    }
    if (kind == "load") {
      TESSEL_CHECK(j.size() >= 2 && j[1].is_string(), "'load' needs a tensor name");
      std::string name = j[1].get<std::string>();
      auto it = producers_.find(name);
      TESSEL_CHECK(it != producers_.end(), "reads '{}', which is not an op defined before this one", name);
      const Operation& producer = it->second;
      TESSEL_CHECK(j.size() - 2 == producer->shape.size(), "reads '{}' with {} indices; it has {} dimensions", name, j.size() - 2,
                   producer->shape.size());
      std::vector<Expr> indices;
      for (size_t i = 2; i < j.size(); ++i) {
        indices.push_back(sub(i));
        TESSEL_CHECK(indices.back().type() == DataType::int64(), "index {} of '{}' is {}, not int64", i - 1, name,
                     indices.back().type().str());
      }
      return ir::producerLoad(name, producer->dtype, std::move(indices), nullptr);
    }
    if (kind == "reduce") fail("a reduction must be the whole body of its op");
    for (auto [k, name] : kBinaryNames) {
      if (kind != name) continue;
      arity(2);
      Expr a = sub(1), b = sub(2);
      TESSEL_CHECK(a.type() == b.type(), "'{}' of {} and {}", kind, a.type().str(), b.type().str());
      return ir::binary(k, a, b);
    }
    fail("unknown node kind '{}'", kind);
  }

 private:
  const std::map<std::string, Operation>& producers_;
  std::vector<ir::IterVar> vars_;
};

std::string checkedName(const json& j, const std::string& where, std::set<std::string>& taken) {
  std::string name = jsonString(j, where);
  TESSEL_CHECK(!name.empty() && name.size() <= 256, "{}: a name of 1 to 256 characters, got '{}'", where, name);
  TESSEL_CHECK(taken.insert(name).second, "{}: '{}' is defined twice", where, name);
  return name;
}

Operation readOp(const json& j, size_t index, const std::map<std::string, Operation>& producers, std::set<std::string>& opNames) {
  std::string where = fmt::format("ops[{}]", index);
  auto op = std::make_shared<OperationNode>();
  op->name = checkedName(jsonMember(j, where, "name"), where + ".name", opNames);
  where = fmt::format("op '{}'", op->name);
  op->dtype = scalarType(jsonMember(j, where, "dtype"), where + ".dtype");
  op->shape = jsonIntegers(jsonMember(j, where, "shape"), where + ".shape", 1, int64_t(1) << 32);
  TESSEL_CHECK(op->shape.size() <= 16, "{}: {} dimensions", where, op->shape.size());
  if (!j.contains("body")) {
    op->kind = OperationNode::Kind::Placeholder;
    return op;
  }
  op->kind = OperationNode::Kind::Compute;
  if (j.contains("tag")) op->tag = jsonString(j["tag"], where + ".tag");
  const json& axes = jsonMember(j, where, "axes");
  TESSEL_CHECK(axes.is_array() && axes.size() == op->shape.size(), "{}.axes: one name per dimension ({}), got {}", where,
               op->shape.size(), jsonEcho(axes));
  std::set<std::string> axisNames;
  std::vector<ir::IterVar> vars;
  for (size_t i = 0; i < axes.size(); ++i) {
    op->axes.push_back({Var(checkedName(axes[i], fmt::format("{}.axes[{}]", where, i), axisNames)), op->shape[i]});
    vars.push_back(op->axes.back());
  }
  std::vector<ir::IterVar> reduceAxes;
  if (j.contains("reduce_axes")) {
    const json& r = j["reduce_axes"];
    TESSEL_CHECK(r.is_array() && !r.empty() && r.size() <= 16, "{}.reduce_axes: 1 to 16 [name, extent] pairs, got {}", where, jsonEcho(r));
    for (size_t i = 0; i < r.size(); ++i) {
      std::string at = fmt::format("{}.reduce_axes[{}]", where, i);
      TESSEL_CHECK(r[i].is_array() && r[i].size() == 2, "{}: expected [name, extent], got {}", at, jsonEcho(r[i]));
      reduceAxes.push_back({Var(checkedName(r[i][0], at, axisNames)), jsonInteger(r[i][1], at + " extent", 1, int64_t(1) << 32)});
      vars.push_back(reduceAxes.back());
    }
  }
  Reader reader(producers, vars);
  const json& body = j["body"];
  try {
    if (body.is_array() && !body.empty() && body[0] == "reduce") {
      TESSEL_CHECK(!reduceAxes.empty(), "a reduction without reduce_axes");
      TESSEL_CHECK(body.size() == 5, "'reduce' takes an operator, a source, axes and a condition");
      std::string opName = jsonString(body[1], "reduce operator");
      const ir::ReduceOp* reduceOp = nullptr;
      for (const ir::ReduceOp& r : kReduceOps)
        if (opName == ir::reduceOpName(r)) reduceOp = &r;
      TESSEL_CHECK(reduceOp != nullptr, "unknown reduction '{}'", opName);
      // Axes by index into the reduce axes (after the data axes), each exactly once.
      std::vector<int64_t> indices = jsonIntegers(body[3], "reduce axes", int64_t(op->axes.size()), int64_t(vars.size()) - 1);
      TESSEL_CHECK(indices.size() == reduceAxes.size(), "the reduction names {} of the {} reduce axes", indices.size(),
                   reduceAxes.size());
      std::vector<ir::IterVar> used;
      for (size_t i = 0; i < indices.size(); ++i) {
        TESSEL_CHECK(indices[i] == int64_t(op->axes.size() + i), "reduce axes out of order");
        used.push_back(vars[size_t(indices[i])]);
      }
      Expr source = reader.expr(body[2], 1);
      Expr condition = body[4].is_null() ? Expr() : reader.expr(body[4], 1);
      TESSEL_CHECK(!condition.defined() || condition.type().isBool(), "the reduction's condition is {}", condition.type().str());
      op->body = ir::reduce(*reduceOp, source, used, condition);
    } else {
      TESSEL_CHECK(reduceAxes.empty(), "reduce_axes without a reduction");
      op->body = reader.expr(body, 1);
    }
  } catch (const Error& e) {
    throw e.withContext(where + ".body");
  }
  TESSEL_CHECK(op->body.type() == op->dtype, "{}: the body is {}, the op {}", where, op->body.type().str(), op->dtype.str());
  return op;
}

}  // namespace

json dagToJson(const ComputeDAG& dag) {
  json ops = json::array();
  for (const Operation& op : dag.ops()) {
    json o = {{"name", op->name}, {"dtype", op->dtype.str()}, {"shape", op->shape}};
    if (!op->isPlaceholder()) {
      if (!op->tag.empty()) o["tag"] = op->tag;
      std::unordered_map<const ir::VarNode*, int> vars;
      json axes = json::array();
      for (auto& a : op->axes) {
        vars.emplace(a.var.node(), int(vars.size()));
        axes.push_back(a.var.name());
      }
      o["axes"] = axes;
      if (auto r = op->reduction()) {
        json reduceAxes = json::array();
        for (auto& a : r->axes) {
          vars.emplace(a.var.node(), int(vars.size()));
          reduceAxes.push_back(json::array({a.var.name(), a.extent}));
        }
        o["reduce_axes"] = reduceAxes;
      }
      o["body"] = Writer(std::move(vars)).expr(op->body);
    }
    ops.push_back(std::move(o));
  }
  return {{"ops", ops}, {"inputs", dag.inputNames()}, {"outputs", dag.outputNames()}};
}

ComputeDAG dagFromJson(const json& j) {
  const json& ops = jsonMember(j, "dag", "ops");
  TESSEL_CHECK(ops.is_array() && !ops.empty() && ops.size() <= 1024, "dag.ops: 1 to 1024 ops, got {}", jsonEcho(ops));
  std::map<std::string, Operation> defined;
  std::vector<Operation> order;
  std::set<std::string> names;
  for (size_t i = 0; i < ops.size(); ++i) {
    Operation op = readOp(ops[i], i, defined, names);
    defined.emplace(op->name, op);
    order.push_back(op);
  }
  auto nameList = [&](const char* key) {
    const json& list = jsonMember(j, "dag", key);
    TESSEL_CHECK(list.is_array(), "dag.{}: expected an array of names", key);
    std::vector<std::string> result;
    for (size_t i = 0; i < list.size(); ++i) result.push_back(jsonString(list[i], fmt::format("dag.{}[{}]", key, i)));
    return result;
  };
  return ComputeDAG::fromParts(std::move(order), nameList("inputs"), nameList("outputs"));
}

}  // namespace tessel::te
