#include "codegen/CSource.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "support/Error.h"

namespace tessel {
extern const char* const kKernelAbiText;
}

namespace tessel::codegen {

using namespace ir;

namespace {

const char* kPrelude = R"PRELUDE(
typedef __SIZE_TYPE__ tessel_size_t;
extern "C" void* aligned_alloc(tessel_size_t, tessel_size_t);
extern "C" void free(void*);
template <class T> static inline T tessel_max(T a, T b) { return a > b ? a : b; }
template <class T> static inline T tessel_min(T a, T b) { return a < b ? a : b; }
static inline int64_t tessel_floordiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
static inline int64_t tessel_floormod(int64_t a, int64_t b) { int64_t m = a % b; return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }
static inline float tessel_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) { bits = sign; }
    else { exp = 127 - 15 + 1; while (!(man & 0x400u)) { man <<= 1; --exp; } man &= 0x3ffu; bits = sign | (exp << 23) | (man << 13); }
  } else if (exp == 31) { bits = sign | 0x7f800000u | (man << 13); }
  else { bits = sign | ((exp + 127 - 15) << 23) | (man << 13); }
  float f; __builtin_memcpy(&f, &bits, 4); return f;
}
static inline uint16_t tessel_f2h(float f) {
  uint32_t x; __builtin_memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u; int32_t exp = (int32_t)((x >> 23) & 0xffu) - 127 + 15; uint32_t man = x & 0x7fffffu;
  if (((x >> 23) & 0xffu) == 0xffu) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    man |= 0x800000u; uint32_t shift = (uint32_t)(14 - exp); uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13); uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return (uint16_t)h;
}
static inline int32_t tessel_fail(char* error, int32_t capacity, const char* message) {
  if (error && capacity > 0) { int32_t i = 0; for (; message[i] && i + 1 < capacity; ++i) error[i] = message[i]; error[i] = 0; }
  return -1;
}
)PRELUDE";

/// The C type that holds one element of `t` in registers (float16 computes as float).
std::string scalarType(DataType t) {
  switch (t.code) {
    case DataType::Code::Float: return t.bits == 64 ? "double" : "float";
    case DataType::Code::Int: return fmt::format("int{}_t", t.bits);
    case DataType::Code::UInt: return fmt::format("uint{}_t", t.bits);
    case DataType::Code::Bool: return "bool";
    default: fail("codegen: no C type for {}", t.str());
  }
}

/// The C type of one element in memory.
std::string storageType(DataType t) {
  if (t.isFloat() && t.bits == 16) return "uint16_t";
  if (t.isBool()) return "uint8_t";
  return scalarType(t);
}

class Emitter {
 public:
  std::ostringstream out;
  std::set<std::string> vectorTypes;  // typedef lines needed

  void function(const LoweredFunction& f) {
    names.clear();
    usedNames.clear();
    out << fmt::format("extern \"C\" int32_t {}(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {{\n", f.name);
    out << fmt::format("  if (num_args != {}) return tessel_fail(error, error_capacity, \"kernel '{}': expected {} arguments\");\n",
                       f.args.size(), f.name, f.args.size());
    for (size_t i = 0; i < f.args.size(); ++i) {
      const Buffer& b = f.args[i];
      std::string prefix = fmt::format("kernel '{}', argument '{}' ({} of {})", f.name, b->name, i + 1, f.args.size());
      DataType t = b->dtype;
      std::string check = fmt::format("args[{0}].data == 0 || args[{0}].ndim != {1} || args[{0}].dtype_code != {2} || args[{0}].dtype_bits != {3} || args[{0}].dtype_lanes != 1 || args[{0}].device_type != TESSEL_DEVICE_CPU",
                                      i, b->shape.size(), int(t.code), int(t.bits));
      out << fmt::format("  if ({}) return tessel_fail(error, error_capacity, \"{}: wrong data pointer, rank, dtype or device (expected {} [{}] on cpu)\");\n",
                         check, prefix, t.str(), fmt::join(b->shape, ", "));
      for (size_t d = 0; d < b->shape.size(); ++d) {
        out << fmt::format("  if (args[{0}].shape[{1}] != {2}) return tessel_fail(error, error_capacity, \"{3}: dimension {1} must be {2}\");\n",
                           i, d, b->shape[d], prefix);
        out << fmt::format("  if (args[{0}].strides && args[{0}].strides[{1}] != {2}) return tessel_fail(error, error_capacity, \"{3}: must be compact row-major\");\n",
                           i, d, b->strides[d], prefix);
      }
      out << fmt::format("  {}* __restrict__ {} = ({}*)args[{}].data;\n", storageType(t), bufferName(b), storageType(t), i);
    }
    indent = 1;
    stmt(f.body);
    out << "  return 0;\n}\n\n";
  }

 private:
  std::map<const void*, std::string> names;
  std::set<std::string> usedNames;
  int indent = 1;
  int tempCounter = 0;
  bool inParallel = false;

  std::string pad() const { return std::string(size_t(indent) * 2, ' '); }

  std::string uniqueName(const void* key, const std::string& base) {
    auto it = names.find(key);
    if (it != names.end()) return it->second;
    std::string clean;
    for (char c : base) clean += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (clean.empty() || std::isdigit(static_cast<unsigned char>(clean[0]))) clean = "v" + clean;
    std::string name = clean;
    for (int k = 1; usedNames.count(name); ++k) name = fmt::format("{}_{}", clean, k);
    usedNames.insert(name);
    names[key] = name;
    return name;
  }
  std::string bufferName(const Buffer& b) { return uniqueName(b.get(), b->name); }
  std::string registerName(const Buffer& b, const Expr& index) {
    const int64_t* offset = index.as<RampNode>() ? asConstInt(index.as<RampNode>()->base) : asConstInt(index);
    TESSEL_ICHECK(offset != nullptr);
    return fmt::format("{}_r{}", bufferName(b), *offset / b->registerLanes);
  }
  std::string varName(const VarNode* v) { return uniqueName(v, v->name); }

  std::string vectorType(DataType t) {
    DataType e = t.element();
    std::string elem = scalarType(e.isBool() ? DataType::int32() : e);
    int bytes = (e.isBool() ? 4 : std::max(1, e.bits / 8)) * t.lanes;
    std::string name = fmt::format("tessel_{}x{}", elem.substr(0, elem.find('_')), t.lanes);
    vectorTypes.insert(fmt::format("typedef {} {} __attribute__((vector_size({})));\ntypedef {} {}_u __attribute__((vector_size({}), aligned({})));",
                                   elem, name, bytes, elem, name, bytes, std::max(1, e.bits / 8)));
    return name;
  }

  std::string typeName(DataType t) { return t.isScalar() ? scalarType(t) : vectorType(t); }

  // ---- expressions -----------------------------------------------------------------------

  std::string constant(const Expr& e) {
    if (auto i = e.as<IntImmNode>()) {
      if (e.type().isBool()) return i->value ? "true" : "false";
      if (e.type() == DataType::int64()) return i->value == INT64_MIN ? "(-9223372036854775807LL - 1)" : fmt::format("{}LL", i->value);
      return fmt::format("(({}){}LL)", scalarType(e.type()), i->value);
    }
    double v = e.as<FloatImmNode>()->value;
    bool single = e.type().bits != 64;
    if (std::isinf(v)) return v > 0 ? (single ? "__builtin_inff()" : "__builtin_inf()") : (single ? "(-__builtin_inff())" : "(-__builtin_inf())");
    if (std::isnan(v)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
    return fmt::format("{:.9g}{}", v, single ? "f" : "").find_first_of(".eEn") == std::string::npos
               ? fmt::format("{:.1f}{}", v, single ? "f" : "")
               : fmt::format("{:.17g}{}", v, single ? "f" : "");
  }

  std::string mathCall(Intrinsic op, DataType t, const std::vector<std::string>& a) {
    std::string f = t.bits == 64 ? "" : "f";
    switch (op) {
      case Intrinsic::Exp: return fmt::format("__builtin_exp{}({})", f, a[0]);
      case Intrinsic::Log: return fmt::format("__builtin_log{}({})", f, a[0]);
      case Intrinsic::Sqrt: return fmt::format("__builtin_sqrt{}({})", f, a[0]);
      case Intrinsic::Rsqrt: return fmt::format("(1.0{} / __builtin_sqrt{}({}))", f, f, a[0]);
      case Intrinsic::Tanh: return fmt::format("__builtin_tanh{}({})", f, a[0]);
      case Intrinsic::Sigmoid: return fmt::format("(1.0{0} / (1.0{0} + __builtin_exp{0}(-({1}))))", f, a[0]);
      case Intrinsic::Erf: return fmt::format("__builtin_erf{}({})", f, a[0]);
      case Intrinsic::Pow: return fmt::format("__builtin_pow{}({}, {})", f, a[0], a[1]);
      case Intrinsic::Abs:
        if (t.isFloat()) return fmt::format("__builtin_fabs{}({})", f, a[0]);
        return fmt::format("({0} < 0 ? ({1})(-{0}) : {0})", a[0], scalarType(t));
      case Intrinsic::Floor: return fmt::format("__builtin_floor{}({})", f, a[0]);
      case Intrinsic::Ceil: return fmt::format("__builtin_ceil{}({})", f, a[0]);
      case Intrinsic::Round: return fmt::format("__builtin_round{}({})", f, a[0]);
    }
    return "";
  }

  /// Wrap-around arithmetic for narrow and 32-bit integers (C's int arithmetic would overflow).
  std::string integerArith(const char* op, DataType t, const std::string& a, const std::string& b) {
    if (t == DataType::int64()) return fmt::format("({} {} {})", a, op, b);
    std::string u = fmt::format("uint{}_t", std::max<int>(32, t.bits));
    return fmt::format("(({})(({})({}) {} ({})({})))", scalarType(t), u, a, op, u, b);
  }

  std::string scalarExpr(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm: return constant(e);
      case ExprKind::Var: return varName(e.as<VarNode>());
      case ExprKind::Not: return fmt::format("(!{})", scalarExpr(e.as<NotNode>()->a));
      case ExprKind::Select:
      case ExprKind::IfThenElse: {
        auto n = static_cast<const SelectNode*>(e.get());
        return fmt::format("({} ? {} : {})", scalarExpr(n->condition), scalarExpr(n->trueValue), scalarExpr(n->falseValue));
      }
      case ExprKind::Cast: {
        auto v = e.as<CastNode>()->value;
        return fmt::format("(({})({}))", scalarType(e.type()), scalarExpr(v));
      }
      case ExprKind::Call: {
        std::vector<std::string> args;
        for (auto& a : e.as<CallNode>()->args) args.push_back(scalarExpr(a));
        return mathCall(e.as<CallNode>()->op, e.type(), args);
      }
      case ExprKind::Load: {
        auto n = e.as<LoadNode>();
        if (n->buffer->registerLanes > 0) return registerName(n->buffer, n->index);
        std::string access = fmt::format("{}[{}]", bufferName(n->buffer), scalarExpr(n->index));
        if (n->buffer->dtype.isFloat() && n->buffer->dtype.bits == 16) return fmt::format("tessel_h2f({})", access);
        if (n->buffer->dtype.isBool()) return fmt::format("({} != 0)", access);
        return access;
      }
      case ExprKind::ProducerLoad:
      case ExprKind::Reduce:
      case ExprKind::Ramp:
      case ExprKind::Broadcast: fail("codegen: unexpected {} in scalar code", int(e.kind()));
      default: break;
    }
    auto n = static_cast<const BinaryNode*>(e.get());
    std::string a = scalarExpr(n->a), b = scalarExpr(n->b);
    DataType t = n->a.type();
    bool narrowInt = t.isIntegral();
    switch (e.kind()) {
      case ExprKind::Add: return narrowInt ? integerArith("+", t, a, b) : fmt::format("({} + {})", a, b);
      case ExprKind::Sub: return narrowInt ? integerArith("-", t, a, b) : fmt::format("({} - {})", a, b);
      case ExprKind::Mul: return narrowInt ? integerArith("*", t, a, b) : fmt::format("({} * {})", a, b);
      case ExprKind::Div: return fmt::format("({} / {})", a, b);
      case ExprKind::Mod: return fmt::format("({} % {})", a, b);
      case ExprKind::FloorDiv: return fmt::format("(({})tessel_floordiv({}, {}))", scalarType(t), a, b);
      case ExprKind::FloorMod: return fmt::format("(({})tessel_floormod({}, {}))", scalarType(t), a, b);
      case ExprKind::Min: return fmt::format("tessel_min<{}>({}, {})", scalarType(t), a, b);
      case ExprKind::Max: return fmt::format("tessel_max<{}>({}, {})", scalarType(t), a, b);
      case ExprKind::EQ: return fmt::format("({} == {})", a, b);
      case ExprKind::NE: return fmt::format("({} != {})", a, b);
      case ExprKind::LT: return fmt::format("({} < {})", a, b);
      case ExprKind::LE: return fmt::format("({} <= {})", a, b);
      case ExprKind::GT: return fmt::format("({} > {})", a, b);
      case ExprKind::GE: return fmt::format("({} >= {})", a, b);
      case ExprKind::And: return fmt::format("({} && {})", a, b);
      case ExprKind::Or: return fmt::format("({} || {})", a, b);
      default: fail("codegen: unsupported expression kind {}", int(e.kind()));
    }
  }

  /// Lane `lane` of a vector expression, as scalar code.
  Expr laneOf(const Expr& e, int lane) {
    if (e.type().isScalar()) return e;
    if (auto r = e.as<RampNode>()) return simplify(r->base + r->stride * Expr(int64_t(lane)));
    if (auto b = e.as<BroadcastNode>()) return b->value;
    struct LaneMutator : IRMutator {
      Emitter* self;
      int lane;
      Expr mutate(const Expr& x) override {
        if (!x.defined() || x.type().isScalar()) return x;
        if (x.as<RampNode>() || x.as<BroadcastNode>()) return self->laneOf(x, lane);
        if (auto l = x.as<LoadNode>()) return load(l->buffer, self->laneOf(l->index, lane));
        if (auto c = x.as<CastNode>()) return cast(x.type().element(), mutate(c->value));
        return IRMutator::mutate(x);
      }
    } m;
    m.self = this;
    m.lane = lane;
    return m.mutate(e);
  }

  std::string lanewise(const Expr& e) {
    std::string t = vectorType(e.type());
    std::string tmp = fmt::format("_t{}", tempCounter++);
    std::string s = fmt::format("({{ {} {}; ", t, tmp);
    for (int l = 0; l < e.type().lanes; ++l) {
      std::string v = scalarExpr(laneOf(e, l));
      if (e.type().isBool()) v = fmt::format("({} ? -1 : 0)", v);
      s += fmt::format("{}[{}] = {}; ", tmp, l, v);
    }
    return s + tmp + "; })";
  }

  static bool isDenseRamp(const Expr& index) {
    auto r = index.as<RampNode>();
    return r && isConstInt(r->stride, 1);
  }

  std::string vectorExpr(const Expr& e) {
    DataType t = e.type();
    switch (e.kind()) {
      case ExprKind::Broadcast: {
        auto b = e.as<BroadcastNode>();
        if (t.isBool()) return lanewise(e);
        return fmt::format("(({}){{}} + ({})({}))", vectorType(t), scalarType(t.element()), scalarExpr(b->value));
      }
      case ExprKind::Load: {
        auto n = e.as<LoadNode>();
        if (n->buffer->registerLanes > 0) return registerName(n->buffer, n->index);
        DataType bt = n->buffer->dtype;
        if (isDenseRamp(n->index) && !(bt.isFloat() && bt.bits == 16) && !bt.isBool())
          return fmt::format("(*({}_u*)({} + {}))", vectorType(t), bufferName(n->buffer), scalarExpr(n->index.as<RampNode>()->base));
        return lanewise(e);
      }
      case ExprKind::Cast: {
        auto v = e.as<CastNode>()->value;
        if (t.isBool() || v.type().isBool()) return lanewise(e);
        return fmt::format("__builtin_convertvector({}, {})", vectorExpr(v), vectorType(t));
      }
      case ExprKind::Select: {
        auto n = static_cast<const SelectNode*>(e.get());
        auto cmp = n->condition.get();
        if (n->condition.kind() >= ExprKind::EQ && n->condition.kind() <= ExprKind::GE) {
          auto c = static_cast<const BinaryNode*>(cmp);
          if (c->a.type().bits == t.bits && !t.isBool())
            return fmt::format("({} ? {} : {})", vectorExpr(n->condition), vectorExpr(n->trueValue), vectorExpr(n->falseValue));
        }
        return lanewise(e);
      }
      case ExprKind::Add:
      case ExprKind::Sub:
      case ExprKind::Mul:
      case ExprKind::Div:
      case ExprKind::Min:
      case ExprKind::Max:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE:
      case ExprKind::EQ:
      case ExprKind::NE: {
        auto n = static_cast<const BinaryNode*>(e.get());
        DataType ot = n->a.type();
        bool supported = ot.isFloat() ? ot.bits != 16 : (ot == DataType::int64(ot.lanes) || ot == DataType::int32(ot.lanes));
        if (ot.isIntegral() && e.kind() == ExprKind::Div) supported = false;
        if (!supported) return lanewise(e);
        std::string a = vectorExpr(n->a), b = vectorExpr(n->b);
        switch (e.kind()) {
          case ExprKind::Add: return fmt::format("({} + {})", a, b);
          case ExprKind::Sub: return fmt::format("({} - {})", a, b);
          case ExprKind::Mul: return fmt::format("({} * {})", a, b);
          case ExprKind::Div: return fmt::format("({} / {})", a, b);
          case ExprKind::Min: return fmt::format("tessel_min<{}>({}, {})", vectorType(ot), a, b);
          case ExprKind::Max: return fmt::format("tessel_max<{}>({}, {})", vectorType(ot), a, b);
          case ExprKind::LT: return fmt::format("({} < {})", a, b);
          case ExprKind::LE: return fmt::format("({} <= {})", a, b);
          case ExprKind::GT: return fmt::format("({} > {})", a, b);
          case ExprKind::GE: return fmt::format("({} >= {})", a, b);
          case ExprKind::EQ: return fmt::format("({} == {})", a, b);
          default: return fmt::format("({} != {})", a, b);
        }
      }
      default: return lanewise(e);
    }
  }

  std::string expr(const Expr& e) { return e.type().isScalar() ? scalarExpr(e) : vectorExpr(e); }

  // ---- statements ------------------------------------------------------------------------

  void stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::Block:
        for (auto& x : s.as<BlockNode>()->stmts) stmt(x);
        return;
      case StmtKind::Pragma: {
        auto p = s.as<PragmaNode>();
        out << pad() << "// pragma " << p->key << " = " << p->value << "\n";
        stmt(p->body);
        return;
      }
      case StmtKind::IfThenElse: {
        auto n = s.as<IfThenElseNode>();
        out << pad() << "if (" << scalarExpr(n->condition) << ") {\n";
        ++indent;
        stmt(n->thenCase);
        --indent;
        if (n->elseCase.defined()) {
          out << pad() << "} else {\n";
          ++indent;
          stmt(n->elseCase);
          --indent;
        }
        out << pad() << "}\n";
        return;
      }
      case StmtKind::For: {
        auto n = s.as<ForNode>();
        std::string v = varName(n->var.node());
        bool parallel = n->forKind == ForKind::Parallel && !inParallel;
        if (parallel) out << pad() << "#pragma omp parallel for schedule(static)\n";
        if (n->forKind == ForKind::Vectorized) out << pad() << "#pragma GCC ivdep\n";
        if (n->forKind == ForKind::Unrolled) {
          if (auto c = asConstInt(n->extent)) out << pad() << fmt::format("#pragma GCC unroll {}\n", std::min<int64_t>(*c, 65534));
        }
        std::string lo = scalarExpr(n->min);
        out << pad() << fmt::format("for (int64_t {0} = {1}; {0} < {1} + {2}; ++{0}) {{\n", v, lo, scalarExpr(n->extent));
        bool saved = inParallel;
        inParallel = inParallel || parallel;
        ++indent;
        stmt(n->body);
        --indent;
        inParallel = saved;
        out << pad() << "}\n";
        return;
      }
      case StmtKind::Allocate: {
        auto n = s.as<AllocateNode>();
        std::string name = bufferName(n->buffer);
        std::string t = storageType(n->buffer->dtype);
        int64_t count = n->buffer->elementCount();
        int64_t bytes = count * n->buffer->dtype.storageBytes();
        if (int lanes = n->buffer->registerLanes; lanes > 0) {
          DataType rt = n->buffer->dtype.withLanes(lanes);
          std::string ty = lanes > 1 ? vectorType(rt) : scalarType(rt);
          for (int64_t r = 0; r < count / lanes; ++r) out << pad() << fmt::format("{} {}_r{};\n", ty, name, r);
          stmt(n->body);
          return;
        }
        if (bytes <= 32 * 1024) {
          out << pad() << fmt::format("alignas(64) {} {}[{}];\n", t, name, count);
          stmt(n->body);
        } else {
          int64_t rounded = (bytes + 63) / 64 * 64;
          out << pad() << fmt::format("{0}* __restrict__ {1} = ({0}*)aligned_alloc(64, {2});\n", t, name, rounded);
          out << pad() << fmt::format("if (!{}) return tessel_fail(error, error_capacity, \"out of memory for buffer {}\");\n", name, n->buffer->name);
          stmt(n->body);
          out << pad() << fmt::format("free({});\n", name);
        }
        return;
      }
      case StmtKind::Store: {
        auto n = s.as<StoreNode>();
        if (n->buffer->registerLanes > 0) {
          out << pad() << fmt::format("{} = {};\n", registerName(n->buffer, n->index), expr(n->value));
          return;
        }
        std::string buf = bufferName(n->buffer);
        DataType bt = n->buffer->dtype;
        bool half = bt.isFloat() && bt.bits == 16;
        if (n->index.type().isScalar()) {
          std::string v = scalarExpr(n->value);
          if (half) v = fmt::format("tessel_f2h({})", v);
          if (bt.isBool()) v = fmt::format("(uint8_t)({} ? 1 : 0)", v);
          out << pad() << fmt::format("{}[{}] = {};\n", buf, scalarExpr(n->index), v);
          return;
        }
        if (isDenseRamp(n->index) && !half && !bt.isBool()) {
          out << pad() << fmt::format("*({}_u*)({} + {}) = {};\n", vectorType(n->value.type()), buf,
                                      scalarExpr(n->index.as<RampNode>()->base), vectorExpr(n->value));
          return;
        }
        // Scatter: evaluate the vector once, store lane by lane.
        std::string tmp = fmt::format("_s{}", tempCounter++);
        out << pad() << fmt::format("{{ {} {} = {};\n", vectorType(n->value.type()), tmp, vectorExpr(n->value));
        for (int l = 0; l < n->index.type().lanes; ++l) {
          std::string v = fmt::format("{}[{}]", tmp, l);
          if (half) v = fmt::format("tessel_f2h({})", v);
          if (bt.isBool()) v = fmt::format("(uint8_t)({} ? 1 : 0)", v);
          out << pad() << fmt::format("  {}[{}] = {};\n", buf, scalarExpr(laneOf(n->index, l)), v);
        }
        out << pad() << "}\n";
        return;
      }
    }
  }
};

}  // namespace

std::string manifestJson(const std::vector<LoweredFunction>& functions) {
  nlohmann::json kernels = nlohmann::json::array();
  for (auto& f : functions) {
    nlohmann::json args = nlohmann::json::array();
    for (auto& b : f.args) args.push_back({{"name", b->name}, {"dtype", b->dtype.str()}, {"shape", b->shape}});
    kernels.push_back({{"name", f.name}, {"args", args}});
  }
  return nlohmann::json{{"kernels", kernels}}.dump();
}

std::string generateCSource(const std::vector<LoweredFunction>& functions) {
  Emitter emitter;
  for (auto& f : functions) emitter.function(f);
  std::string manifest = manifestJson(functions);
  std::string escaped;
  for (char c : manifest) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  std::ostringstream src;
  src << "// Generated by tessel.\n" << kKernelAbiText << kPrelude;
  for (auto& t : emitter.vectorTypes) src << t << "\n";
  src << "\n" << emitter.out.str();
  src << "extern \"C\" const char* tessel_module_manifest(void) { return \"" << escaped << "\"; }\n";
  return src.str();
}

}  // namespace tessel::codegen
