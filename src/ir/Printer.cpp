#include "ir/Printer.h"

#include <fmt/format.h>

#include <sstream>

namespace tessel::ir {

namespace {

const char* binarySymbol(ExprKind k) {
  switch (k) {
    case ExprKind::Add: return " + ";
    case ExprKind::Sub: return " - ";
    case ExprKind::Mul: return "*";
    case ExprKind::Div: return "/";
    case ExprKind::Mod: return " % ";
    case ExprKind::EQ: return " == ";
    case ExprKind::NE: return " != ";
    case ExprKind::LT: return " < ";
    case ExprKind::LE: return " <= ";
    case ExprKind::GT: return " > ";
    case ExprKind::GE: return " >= ";
    case ExprKind::And: return " && ";
    case ExprKind::Or: return " || ";
    default: return nullptr;
  }
}

const char* binaryFunction(ExprKind k) {
  switch (k) {
    case ExprKind::FloorDiv: return "floordiv";
    case ExprKind::FloorMod: return "floormod";
    case ExprKind::Min: return "min";
    case ExprKind::Max: return "max";
    default: return nullptr;
  }
}

std::string floatText(double v, DataType t) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eni") == std::string::npos) s += "";
  return s + (t.bits == 32 ? "f" : (t.bits == 16 ? "f16" : ""));
}

}  // namespace

std::string toString(const Expr& e) {
  if (!e.defined()) return "<undefined>";
  switch (e.kind()) {
    case ExprKind::IntImm: {
      auto v = e.as<IntImmNode>()->value;
      if (e.type().isBool()) return v ? "True" : "False";
      if (e.type() == DataType::int64() || e.type() == DataType::int32()) return std::to_string(v);
      return fmt::format("{}{}", v, e.type().str());
    }
    case ExprKind::FloatImm: return floatText(e.as<FloatImmNode>()->value, e.type());
    case ExprKind::Var: return e.as<VarNode>()->name;
    case ExprKind::Not: return fmt::format("!{}", toString(e.as<NotNode>()->a));
    case ExprKind::Select:
    case ExprKind::IfThenElse: {
      auto n = static_cast<const SelectNode*>(e.get());
      return fmt::format("{}({}, {}, {})", e.kind() == ExprKind::Select ? "select" : "if_then_else",
                         toString(n->condition), toString(n->trueValue), toString(n->falseValue));
    }
    case ExprKind::Cast: return fmt::format("{}({})", e.type().str(), toString(e.as<CastNode>()->value));
    case ExprKind::Call: {
      auto n = e.as<CallNode>();
      std::string s = std::string(intrinsicName(n->op)) + "(";
      for (size_t i = 0; i < n->args.size(); ++i) s += (i ? ", " : "") + toString(n->args[i]);
      return s + ")";
    }
    case ExprKind::ProducerLoad: {
      auto n = e.as<ProducerLoadNode>();
      std::string s = n->producer + "[";
      for (size_t i = 0; i < n->indices.size(); ++i) s += (i ? ", " : "") + toString(n->indices[i]);
      return s + "]";
    }
    case ExprKind::Load: {
      auto n = e.as<LoadNode>();
      return n->buffer->name + "[" + toString(n->index) + "]";
    }
    case ExprKind::Ramp: {
      auto n = e.as<RampNode>();
      return fmt::format("ramp({}, {}, {})", toString(n->base), toString(n->stride), n->lanes);
    }
    case ExprKind::Broadcast: {
      auto n = e.as<BroadcastNode>();
      return fmt::format("broadcast({}, {})", toString(n->value), n->lanes);
    }
    case ExprKind::Reduce: {
      auto n = e.as<ReduceNode>();
      std::string axes;
      for (size_t i = 0; i < n->axes.size(); ++i) axes += (i ? ", " : "") + n->axes[i].var.name();
      std::string s = fmt::format("{}({}, axis=[{}]", reduceOpName(n->op), toString(n->source), axes);
      if (n->condition.defined()) s += ", where=" + toString(n->condition);
      return s + ")";
    }
    default: {
      auto b = static_cast<const BinaryNode*>(e.get());
      if (auto sym = binarySymbol(e.kind())) return "(" + toString(b->a) + sym + toString(b->b) + ")";
      return fmt::format("{}({}, {})", binaryFunction(e.kind()), toString(b->a), toString(b->b));
    }
  }
}

std::string toString(const Stmt& s, int indent) {
  if (!s.defined()) return "";
  std::string pad(size_t(indent) * 2, ' ');
  std::ostringstream out;
  switch (s.kind()) {
    case StmtKind::For: {
      auto n = s.as<ForNode>();
      // Loop partitioning leaves constant bounds: print `range(4, 12)`, not `range(4, (4 + 8))`.
      const int64_t* lo = asConstInt(n->min);
      const int64_t* extent = asConstInt(n->extent);
      std::string end = lo && extent ? std::to_string(*lo + *extent) : toString(n->min + n->extent);
      std::string range = isConstInt(n->min, 0) ? toString(n->extent) : fmt::format("{}, {}", toString(n->min), end);
      out << pad << forKindName(n->forKind) << " " << n->var.name() << " in range(" << range << "):\n"
          << toString(n->body, indent + 1);
      break;
    }
    case StmtKind::Store: {
      auto n = s.as<StoreNode>();
      out << pad << n->buffer->name << "[" << toString(n->index) << "] = " << toString(n->value) << "\n";
      break;
    }
    case StmtKind::IfThenElse: {
      auto n = s.as<IfThenElseNode>();
      out << pad << "if " << toString(n->condition) << ":\n" << toString(n->thenCase, indent + 1);
      if (n->elseCase.defined()) out << pad << "else:\n" << toString(n->elseCase, indent + 1);
      break;
    }
    case StmtKind::Block:
      for (auto& x : s.as<BlockNode>()->stmts) out << toString(x, indent);
      break;
    case StmtKind::Allocate: {
      auto n = s.as<AllocateNode>();
      out << pad << "allocate " << n->buffer->name << "[" << n->buffer->dtype.str() << " * "
          << n->buffer->elementCount() << "]\n"
          << toString(n->body, indent);
      break;
    }
    case StmtKind::Pragma: {
      auto n = s.as<PragmaNode>();
      out << pad << "// pragma " << n->key << " = " << n->value << "\n" << toString(n->body, indent);
      break;
    }
    case StmtKind::WarpMma: {
      auto n = s.as<WarpMmaNode>();
      out << pad << warpMmaIntrinsicName(n->intrinsic) << "(" << toString(n->accumulator) << " strides [" << n->accumulatorRowStride
          << ", " << n->accumulatorColumnStride << "], " << toString(n->a) << " strides [" << n->aRowStride << ", "
          << n->aReductionStride << "], " << toString(n->b) << " strides [" << n->bReductionStride << ", " << n->bColumnStride
          << "], sub-tile " << n->rows << " x " << n->columns << (n->interleavedLanes ? " interleaved" : "") << ", reduction "
          << n->reduction << ")\n";
      break;
    }
  }
  return out.str();
}

}  // namespace tessel::ir
