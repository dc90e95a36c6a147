#include "codegen/CSource.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ir/Equality.h"
#include "ir/Mutator.h"
#include "codegen/VectorMath.h"
#include "schedule/Steps.h"
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
// Branch-free (& rather than &&): GCC then hoists the index arithmetic of fused loops out of
// inner loops, which it does not do across the branches of a conditional.
template <class T> static inline T tessel_floordiv(T a, T b) { T m = a % b; return a / b - (T)((m != 0) & ((m < 0) != (b < 0))); }
template <class T> static inline T tessel_floormod(T a, T b) { T m = a % b; return m + b * (T)((m != 0) & ((m < 0) != (b < 0))); }
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
struct tessel_text { char* out; int32_t capacity; int32_t size; };
__attribute__((noinline, cold)) static void tessel_put(tessel_text* t, const char* s) {
  for (; *s && t->size + 1 < t->capacity; ++s) t->out[t->size++] = *s;
  if (t->capacity > 0) t->out[t->size] = 0;
}
__attribute__((noinline, cold)) static void tessel_put_int(tessel_text* t, int64_t v) {
  char digits[24]; int n = 0; uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do { digits[n++] = (char)('0' + u % 10); u /= 10; } while (u);
  char text[26]; int k = 0; if (v < 0) text[k++] = '-';
  while (n) text[k++] = digits[--n];
  text[k] = 0; tessel_put(t, text);
}
__attribute__((noinline, cold)) static int32_t tessel_fail(char* error, int32_t capacity, const char* message) {
  tessel_text t = {error, error ? capacity : 0, 0};
  tessel_put(&t, message);
  return -1;
}
struct tessel_arg_spec { const char* name; const char* dtype; uint8_t code, bits; int32_t ndim; const int64_t* shape; };
__attribute__((noinline, cold)) static int32_t tessel_arg_error(const char* kernel, const tessel_arg_spec* s, int32_t index,
    int32_t count, const char* problem, int64_t dim, char* error, int32_t capacity) {
  /* dim >= 0: "dimension <dim> must be <extent>"; -1: the problem and what was expected; -2: the problem alone */
  tessel_text t = {error, error ? capacity : 0, 0};
  tessel_put(&t, "kernel '"); tessel_put(&t, kernel); tessel_put(&t, "', argument '"); tessel_put(&t, s->name);
  tessel_put(&t, "' ("); tessel_put_int(&t, index + 1); tessel_put(&t, " of "); tessel_put_int(&t, count); tessel_put(&t, "): ");
  tessel_put(&t, problem);
  if (dim >= 0) { tessel_put_int(&t, dim); tessel_put(&t, " must be "); tessel_put_int(&t, s->shape[dim]); return -1; }
  if (dim == -2) return -1;
  tessel_put(&t, " (expected "); tessel_put(&t, s->dtype); tessel_put(&t, " [");
  for (int32_t d = 0; d < s->ndim; ++d) { if (d) tessel_put(&t, ", "); tessel_put_int(&t, s->shape[d]); }
  tessel_put(&t, "] on cpu)");
  return -1;
}
__attribute__((noinline)) static int32_t tessel_check_args(const char* kernel, const TesselTensor* args, int32_t num_args,
    const tessel_arg_spec* specs, int32_t count, char* error, int32_t capacity) {
  if (num_args != count) {
    tessel_text t = {error, error ? capacity : 0, 0};
    tessel_put(&t, "kernel '"); tessel_put(&t, kernel); tessel_put(&t, "': expected "); tessel_put_int(&t, count);
    tessel_put(&t, " arguments, got "); tessel_put_int(&t, num_args);
    return -1;
  }
  for (int32_t i = 0; i < count; ++i) {
    const TesselTensor* a = &args[i]; const tessel_arg_spec* s = &specs[i];
    if (a->data == 0 || a->ndim != s->ndim || a->dtype_code != s->code || a->dtype_bits != s->bits || a->dtype_lanes != 1 ||
        a->device_type != TESSEL_DEVICE_CPU)
      return tessel_arg_error(kernel, s, i, count, "wrong data pointer, rank, dtype or device", -1, error, capacity);
    for (int32_t d = 0; d < s->ndim; ++d)
      if (a->shape[d] != s->shape[d]) return tessel_arg_error(kernel, s, i, count, "dimension ", d, error, capacity);
    int64_t stride = 1;
    for (int32_t d = s->ndim - 1; d >= 0 && a->strides; stride *= s->shape[d], --d)
      if (a->strides[d] != stride) return tessel_arg_error(kernel, s, i, count, "must be compact row-major", -2, error, capacity);
  }
  return 0;
}
)PRELUDE";

const char* kParallelFor = R"PARALLEL(
extern "C" int omp_get_thread_num(void);
extern "C" int omp_get_num_threads(void);
extern "C" int omp_get_max_threads(void);
// The iterations [0, n) of a parallel loop. Each thread owns the contiguous block that
// schedule(static) would give it, so consecutive kernels split their rows alike and find them in
// the same core's cache, and runs it from the front; a thread done with its block takes
// iterations from the back of the blocks still being run. So a core slowed by another program
// or by its host (two virtual cores of one machine differed by up to 1.7x from one millisecond
// to the next) no longer holds the whole loop back. A block is one 64-bit word, its front in
// the low half and its end in the high half, claimed by compare-and-swap from either side in
// grains of a sixteenth of a block, so that a loop of many tiny iterations pays few atomics.
struct alignas(64) tessel_block { uint64_t range; };
static inline bool tessel_claim(tessel_block* b, bool front, int64_t grain, int64_t* first, int64_t* last) {
  uint64_t r = __atomic_load_n(&b->range, __ATOMIC_RELAXED);
  for (;;) {
    const int64_t lo = (int64_t)(uint32_t)r, hi = (int64_t)(r >> 32);
    if (lo >= hi) return false;
    const int64_t take = hi - lo < grain ? hi - lo : grain;
    const uint64_t next = front ? ((uint64_t)hi << 32 | (uint64_t)(lo + take)) : ((uint64_t)(hi - take) << 32 | (uint64_t)lo);
    if (__atomic_compare_exchange_n(&b->range, &r, next, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
      *first = front ? lo : hi - take;
      *last = front ? lo + take : hi;
      return true;
    }
  }
}
template <class F> static inline void tessel_parallel_for(int64_t n, const F& body) {
#ifndef _OPENMP
  for (int64_t i = 0; i < n; ++i) body(i);
#else
  // The blocks are laid out before the region for the team it will have, so no thread waits
  // for the others to publish theirs; a team of another size (a nested region, a thread
  // limit) runs the loop split statically instead. One cache line per thread, on the stack.
  const int planned = omp_get_max_threads();
  const bool balanced = planned > 1 && n < ((int64_t)1 << 31);
  tessel_block* blocks = (tessel_block*)(((uintptr_t)__builtin_alloca((balanced ? planned : 0) * sizeof(tessel_block) + 64) + 63) &
                                         ~(uintptr_t)63);
  const int64_t grain = balanced && n / planned / 16 > 1 ? n / planned / 16 : 1;
  for (int b = 0; balanced && b < planned; ++b)
    blocks[b].range = (uint64_t)(n * (b + 1) / planned) << 32 | (uint64_t)(n * b / planned);
  #pragma omp parallel
  {
    const int threads = omp_get_num_threads(), t = omp_get_thread_num();
    if (!balanced || threads != planned) {
      #pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) body(i);
    } else {
      int64_t first, last;
      while (tessel_claim(&blocks[t], true, grain, &first, &last))
        for (int64_t i = first; i < last; ++i) body(i);
      for (int k = 1; k < threads; ++k)
        while (tessel_claim(&blocks[(t + k) % threads], false, grain, &first, &last))
          for (int64_t i = first; i < last; ++i) body(i);
    }
  }
#endif
}
)PARALLEL";

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
  std::vector<std::string> workspaces;  // file-scope workspace pointers (see Allocate)

  void function(const LoweredFunction& f) {
    names.clear();
    usedNames.clear();
    functionName = f.name;
    out << fmt::format("extern \"C\" int32_t {}(const TesselTensor* args, int32_t num_args, char* error, int32_t error_capacity) {{\n", f.name);
    // The checks are data for one shared routine of the prelude: spelled out per argument
    // they were half of the compile time of a small kernel.
    std::vector<std::string> descriptors;
    for (size_t i = 0; i < f.args.size(); ++i) {
      const Buffer& b = f.args[i];
      std::string shape = fmt::format("tessel_shape_{}_{}", functionCounter, i);
      out << fmt::format("  static const int64_t {}[] = {{{}}};\n", shape, b->shape.empty() ? "0" : fmt::format("{}", fmt::join(b->shape, ", ")));
      descriptors.push_back(fmt::format("{{\"{}\", \"{}\", {}, {}, {}, {}}}", b->name, b->dtype.str(), int(b->dtype.code),
                                        int(b->dtype.bits), b->shape.size(), shape));
    }
    out << fmt::format("  static const tessel_arg_spec tessel_specs[] = {{{}}};\n",
                       descriptors.empty() ? "{0, 0, 0, 0, 0, 0}" : fmt::format("{}", fmt::join(descriptors, ", ")));
    out << fmt::format("  if (tessel_check_args(\"{}\", args, num_args, tessel_specs, {}, error, error_capacity)) return -1;\n",
                       f.name, f.args.size());
    for (size_t i = 0; i < f.args.size(); ++i) {
      const Buffer& b = f.args[i];
      out << fmt::format("  {}* __restrict__ {} = ({}*)args[{}].data;\n", storageType(b->dtype), bufferName(b), storageType(b->dtype), i);
    }
    ++functionCounter;
    indent = 1;
    stmt(f.body);
    out << "  return 0;\n}\n\n";
  }

 private:
  std::map<const void*, std::string> names;
  std::set<std::string> usedNames;
  int indent = 1;
  int tempCounter = 0;
  int functionCounter = 0;
  std::string functionName;
  bool inParallel = false;
  bool inClosure = false;  ///< inside the closure of a parallel loop (see StmtKind::For)

  /// Buffers up to this size live on the stack: stack pages stay mapped from call to call,
  /// while a fresh heap block of this size costs a page fault per 4 KiB on every call. The
  /// limit stays well under the smallest thread stack OpenMP workers get (2 MiB).
  static constexpr int64_t kMaxStackBufferBytes = 256 * 1024;

  static bool onHeap(const Buffer& buffer) {
    return buffer->registerLanes == 0 && buffer->elementCount() * buffer->dtype.storageBytes() > kMaxStackBufferBytes;
  }

  static bool containsHeapAllocation(const Stmt& s) {
    struct Finder : IRVisitor {
      bool found = false;
      void visit(const Expr&) override {}
      void visit(const Stmt& x) override {
        if (auto a = x.as<AllocateNode>(); a && onHeap(a->buffer)) found = true;
        if (!found) IRVisitor::visit(x);
      }
    } finder;
    finder.visit(s);
    return finder.found;
  }

  /// True if a parallel loop inside `s` (a lambda handed to tessel_parallel_for in the
  /// source) loads or stores `buffer`.
  static bool accessedInParallelLoop(const Stmt& s, const BufferNode* buffer) {
    struct Finder : IRVisitor {
      const BufferNode* buffer = nullptr;
      bool found = false;
      void visit(const Expr&) override {}
      void visit(const Stmt& x) override {
        if (found) return;
        if (auto f = x.as<ForNode>(); f && f->forKind == ForKind::Parallel) found = accessesBuffer(f->body, buffer);
        else IRVisitor::visit(x);
      }
    } finder;
    finder.buffer = buffer;
    finder.visit(s);
    return finder.found;
  }

  /// Marks a local variable live from its declaration on, for one that a parallel loop's
  /// lambda fills. GCC (seen with 12.2) decides which locals may share a
  /// stack slot from where each is first mentioned. When the loop-invariant address of a
  /// variable declared inside a loop is hoisted out of it and the lambda is its only user
  /// before the region, the variable looks dead until after the region, and GCC gave its
  /// slot to the OpenMP region's argument block: the lambda's stores overwrote the block's
  /// pointers (a crash the schedule fuzzer found). An empty asm naming the address is a
  /// mention inside the loop that no pass moves, and costs no instruction.
  void keepLiveFromHere(const std::string& address) {
    out << pad() << fmt::format("__asm__ volatile(\"\" : : \"r\"({}));\n", address);
  }

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
    std::string name = fmt::format("{}_r{}", bufferName(b), *offset / b->registerLanes);
    // One lane of a vector register: what lane-by-lane code (laneOf) reads.
    if (index.type().isScalar() && b->registerLanes > 1) name += fmt::format("[{}]", *offset % b->registerLanes);
    return name;
  }
  std::string varName(const VarNode* v) { return uniqueName(v, v->name); }

  /// "#pragma omp simd reduction(op:acc)" for a serial loop whose body only accumulates into
  /// one float register, acc = acc + e or the max or min of acc and e (e not reading acc): a row
  /// reduction the schedule left scalar (its length not a multiple of the lanes: ViT's 197
  /// tokens) then runs on vectors, its tail masked by the compiler. Without it, C's order of
  /// float additions forbids that, and each step waits for the last (a softmax of 197 x 197
  /// scores took 1 ms at 2 threads). "" for any other loop.
  std::string simdReduction(const ForNode* n) {
    auto store = n->body.as<StoreNode>();
    if (n->forKind != ForKind::Serial || !store || store->buffer->registerLanes != 1 || !store->buffer->dtype.isFloat() ||
        !store->buffer->dtype.isScalar() || !store->index.type().isScalar())
      return "";
    const char* op = nullptr;
    switch (store->value.kind()) {
      case ExprKind::Add: op = "+"; break;
      case ExprKind::Max: op = "max"; break;
      case ExprKind::Min: op = "min"; break;
      default: return "";
    }
    auto binary = static_cast<const BinaryNode*>(store->value.get());
    auto isAccumulator = [&](const Expr& e) {
      auto load = e.as<LoadNode>();
      return load && load->buffer.get() == store->buffer.get() && structurallyEqual(load->index, store->index);
    };
    const Expr& other = isAccumulator(binary->a) ? binary->b : isAccumulator(binary->b) ? binary->a : Expr();
    if (!other.defined() || readsBuffer(other, store->buffer.get())) return "";
    return fmt::format("#pragma omp simd reduction({}:{})", op, registerName(store->buffer, store->index));
  }

  std::string vectorType(DataType t) {
    // The lanes hold what scalar code computes in: bool as int32 masks, float16 as float.
    DataType e = t.element();
    DataType lane = e.isBool() ? DataType::int32() : (e.isFloat() && e.bits == 16 ? DataType::float32() : e);
    std::string elem = scalarType(lane);
    int bytes = lane.bits / 8 * t.lanes;
    std::string name = fmt::format("tessel_{}x{}", elem.substr(0, elem.find('_')), t.lanes);
    vectorTypes.insert(fmt::format("typedef {} {} __attribute__((vector_size({})));\ntypedef {} {}_u __attribute__((vector_size({}), aligned({})));",
                                   elem, name, bytes, elem, name, bytes, lane.bits / 8));
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
        // float16 computes as float: a cast to it must still round to float16 precision.
        if (e.type().isFloat() && e.type().bits == 16) return fmt::format("tessel_h2f(tessel_f2h((float)({})))", scalarExpr(v));
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
      // In the operand type: GCC 12 crashes (internal compiler error, -march with AVX-512)
      // vectorizing an int64 floormod of int32 lanes.
      case ExprKind::FloorDiv: return fmt::format("(({0})tessel_floordiv<{0}>({1}, {2}))", scalarType(t), a, b);
      case ExprKind::FloorMod: return fmt::format("(({0})tessel_floormod<{0}>({1}, {2}))", scalarType(t), a, b);
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
        return broadcastOf(scalarExpr(b->value), t);
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
        if (t.isBool() || v.type().isBool() || (t.isFloat() && t.bits == 16)) return lanewise(e);
        return fmt::format("__builtin_convertvector({}, {})", vectorExpr(v), vectorType(t));
      }
      case ExprKind::Select:
      case ExprKind::IfThenElse: {
        auto n = static_cast<const SelectNode*>(e.get());
        // A lane-invariant condition (padding borders; select broadcasts it): one branch over
        // whole vectors. C's ?: evaluates only the chosen side, which keeps if_then_else's
        // guarded loads safe.
        if (auto invariant = n->condition.as<BroadcastNode>(); invariant && !t.isBool()) {
          return fmt::format("({} ? {} : {})", scalarExpr(invariant->value), vectorExpr(n->trueValue),
                             vectorExpr(n->falseValue));
        }
        if (e.kind() == ExprKind::IfThenElse) return lanewise(e);
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
      case ExprKind::Call: {
        // Float32 vectors: the vector math of VectorMath.h, whole vectors at a time.
        auto c = e.as<CallNode>();
        const char* vectorMath = nullptr;
        switch (c->op) {
          case Intrinsic::Exp: vectorMath = "tessel_vexp"; break;
          case Intrinsic::Erf: vectorMath = "tessel_verf"; break;
          case Intrinsic::Tanh: vectorMath = "tessel_vtanh"; break;
          case Intrinsic::Sigmoid: vectorMath = "tessel_vsigmoid"; break;
          default: break;
        }
        if (!vectorMath || t.element() != DataType::float32()) return lanewise(e);
        return fmt::format("{}<{}, {}>({})", vectorMath, vectorType(t), vectorType(DataType::int32(t.lanes)), vectorExpr(c->args[0]));
      }
      default: return lanewise(e);
    }
  }

  std::string expr(const Expr& e) { return e.type().isScalar() ? scalarExpr(e) : vectorExpr(e); }

  std::string broadcastOf(const std::string& scalar, DataType t) {
    // x - 0 is x for every float (-0 and NaN included), so the compiler folds it to a bare
    // broadcast; x + 0 would cost an add because -0 + 0 is +0.
    return fmt::format("(({})({}) - ({}){{}})", scalarType(t.element()), scalar, vectorType(t));
  }

  // ---- statements ------------------------------------------------------------------------

  void stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::Block:
        for (auto& x : s.as<BlockNode>()->stmts) stmt(x);
        return;
      case StmtKind::Pragma: {
        auto p = s.as<PragmaNode>();
        TESSEL_CHECK(p->key != schedule::kTensorizePragma || !warpMmaIntrinsicOf(p->value),
                     "C codegen, function '{}': the tensor-core intrinsic {} needs a CUDA target", functionName, p->value);
        out << pad() << "// pragma " << p->key << " = " << p->value << "\n";
        stmt(p->body);
        return;
      }
      case StmtKind::WarpMma:
        fail("C codegen, function '{}': the tensor-core intrinsic {} needs a CUDA target", functionName,
             warpMmaIntrinsicName(s.as<WarpMmaNode>()->intrinsic));
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
        // A loop bound to a GPU index runs as a plain loop on the CPU: the schedule means the
        // same loop nest (the GPU lowering is where bindings become the launch).
        if (isGpuBinding(n->forKind)) out << pad() << "// bound to " << forKindName(n->forKind) << " on a GPU\n";
        std::string v = varName(n->var.node());
        bool parallel = n->forKind == ForKind::Parallel && !inParallel;
        // A heap buffer inside a parallel loop cannot `return` its allocation failure from
        // the OpenMP region: the body becomes a closure whose failure sets a shared flag.
        bool closure = parallel && containsHeapAllocation(n->body);
        std::string flag = closure ? fmt::format("tessel_failed_{}", tempCounter++) : "";
        if (closure) out << pad() << fmt::format("int32_t {} = 0;\n", flag);
        if (n->forKind == ForKind::Vectorized) out << pad() << "#pragma GCC ivdep\n";
        if (std::string reduction = simdReduction(n); !reduction.empty()) out << pad() << reduction << "\n";
        if (n->forKind == ForKind::Unrolled) {
          if (auto c = asConstInt(n->extent)) out << pad() << fmt::format("#pragma GCC unroll {}\n", std::min<int64_t>(*c, 65534));
        }
        std::string lo = scalarExpr(n->min);
        // The prelude's tessel_parallel_for runs the iterations (a lambda, so the loop's body
        // stays as it is).
        if (parallel)
          out << pad() << fmt::format("tessel_parallel_for({2}, [&](int64_t {0}_index) {{ const int64_t {0} = {1} + {0}_index;\n", v, lo,
                                      scalarExpr(n->extent));
        else
          out << pad() << fmt::format("for (int64_t {0} = {1}; {0} < {1} + {2}; ++{0}) {{\n", v, lo, scalarExpr(n->extent));
        bool saved = inParallel, savedClosure = inClosure;
        inParallel = inParallel || parallel;
        inClosure = inClosure || closure;
        ++indent;
        if (closure) {
          out << pad() << "if ([&]() -> int32_t {\n";
          ++indent;
        }
        stmt(n->body);
        if (closure) {
          out << pad() << "return 0;\n";
          --indent;
          out << pad() << fmt::format("}}() != 0) {{\n{0}  #pragma omp atomic write\n{0}  {1} = 1;\n{0}}}\n", pad(), flag);
        }
        --indent;
        inParallel = saved;
        inClosure = savedClosure;
        out << pad() << (parallel ? "});\n" : "}\n");
        if (closure) {
          out << pad() << fmt::format("if ({}) return tessel_fail(error, error_capacity, \"out of memory for a buffer in a parallel loop\");\n", flag);
        }
        return;
      }
      case StmtKind::Allocate: {
        auto n = s.as<AllocateNode>();
        std::string name = bufferName(n->buffer);
        std::string t = storageType(n->buffer->dtype);
        int64_t count = n->buffer->elementCount();
        int64_t bytes = count * n->buffer->dtype.storageBytes();
        // A local (registers or a stack array) that a parallel loop's lambda fills.
        bool filledInParallel = !inParallel && !onHeap(n->buffer) && accessedInParallelLoop(n->body, n->buffer.get());
        if (int lanes = n->buffer->registerLanes; lanes > 0) {
          DataType rt = n->buffer->dtype.withLanes(lanes);
          std::string ty = lanes > 1 ? vectorType(rt) : scalarType(rt);
          for (int64_t r = 0; r < count / lanes; ++r) {
            out << pad() << fmt::format("{} {}_r{};\n", ty, name, r);
            if (filledInParallel) keepLiveFromHere(fmt::format("&{}_r{}", name, r));
          }
          stmt(n->body);
          return;
        }
        if (!onHeap(n->buffer)) {
          out << pad() << fmt::format("alignas(64) {} {}[{}];\n", t, name, count);
          if (filledInParallel) keepLiveFromHere(name);
          stmt(n->body);
        } else if (!inParallel && !inClosure) {
          // A buffer of the whole call (not per iteration of a parallel loop) is the library's
          // workspace, allocated on the first call and kept: allocating and freeing a megabyte
          // on every call costs an mmap, a munmap and a page fault per 4 KiB. A second call
          // running at the same time (another thread) finds it taken and allocates its own.
          int64_t rounded = (bytes + 63) / 64 * 64;
          std::string ws = fmt::format("tessel_workspace_{}_{}", functionName, workspaces.size());
          workspaces.push_back(ws);
          out << pad() << fmt::format("const int {0}_mine = __atomic_exchange_n(&{0}_busy, 1, __ATOMIC_ACQUIRE) == 0;\n", ws);
          out << pad() << fmt::format("if ({0}_mine && !{0}) {0} = aligned_alloc(64, {1});\n", ws, rounded);
          out << pad() << fmt::format("{0}* __restrict__ {1} = ({0}*)({2}_mine ? {2} : aligned_alloc(64, {3}));\n", t, name, ws, rounded);
          out << pad() << fmt::format("if (!{}) {{\n", name);
          out << pad() << fmt::format("  if ({0}_mine) __atomic_store_n(&{0}_busy, 0, __ATOMIC_RELEASE);\n", ws);
          out << pad() << fmt::format("  return tessel_fail(error, error_capacity, \"out of memory for buffer {}\");\n", n->buffer->name);
          out << pad() << "}\n";
          stmt(n->body);
          out << pad() << fmt::format("if ({0}_mine) __atomic_store_n(&{0}_busy, 0, __ATOMIC_RELEASE); else free({1});\n", ws, name);
        } else {
          int64_t rounded = (bytes + 63) / 64 * 64;
          out << pad() << fmt::format("{0}* __restrict__ {1} = ({0}*)aligned_alloc(64, {2});\n", t, name, rounded);
          if (inClosure) {
            out << pad() << fmt::format("if (!{}) return -1;\n", name);
          } else {
            out << pad() << fmt::format("if (!{}) return tessel_fail(error, error_capacity, \"out of memory for buffer {}\");\n", name, n->buffer->name);
          }
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

namespace {

nlohmann::json manifestEntry(const LoweredFunction& f) {
  nlohmann::json args = nlohmann::json::array();
  for (auto& b : f.args) args.push_back({{"name", b->name}, {"dtype", b->dtype.str()}, {"shape", b->shape}});
  nlohmann::json kernel = {{"name", f.name}, {"args", args}};
  if (f.numOutputs > 0) kernel["outputs"] = f.numOutputs;
  return kernel;
}

}  // namespace

std::string manifestJson(const std::vector<LoweredFunction>& functions) {
  nlohmann::json kernels = nlohmann::json::array();
  for (auto& f : functions) kernels.push_back(manifestEntry(f));
  return nlohmann::json{{"kernels", kernels}}.dump();
}

CFunctionSource generateCFunction(const LoweredFunction& function) {
  Emitter emitter;
  emitter.function(function);
  return {function.name, emitter.out.str(), {emitter.vectorTypes.begin(), emitter.vectorTypes.end()}, emitter.workspaces,
          manifestEntry(function)};
}

nlohmann::json CFunctionSource::toJson() const {
  return {{"name", name}, {"text", text}, {"vector_types", vectorTypes}, {"workspaces", workspaces}, {"manifest", manifest}};
}

CFunctionSource CFunctionSource::fromJson(const nlohmann::json& j) {
  return {j.at("name").get<std::string>(), j.at("text").get<std::string>(), j.at("vector_types").get<std::vector<std::string>>(),
          j.at("workspaces").get<std::vector<std::string>>(), j.at("manifest")};
}

std::string assembleCSource(const std::vector<CFunctionSource>& functions) {
  std::set<std::string> vectorTypes;
  std::vector<std::string> workspaces;
  nlohmann::json kernels = nlohmann::json::array();
  std::set<std::string> names;
  for (const auto& f : functions) {
    TESSEL_CHECK(names.insert(f.name).second, "two functions of one translation unit are named '{}'", f.name);
    vectorTypes.insert(f.vectorTypes.begin(), f.vectorTypes.end());
    workspaces.insert(workspaces.end(), f.workspaces.begin(), f.workspaces.end());
    kernels.push_back(f.manifest);
  }
  std::string manifest = nlohmann::json{{"kernels", kernels}}.dump();
  std::string escaped;
  for (char c : manifest) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  std::ostringstream src;
  src << "// Generated by tessel.\n" << kKernelAbiText << kPrelude << kVectorMathText << kParallelFor;
  for (auto& t : vectorTypes) src << t << "\n";
  for (auto& w : workspaces) src << "static void* " << w << " = 0;\nstatic int " << w << "_busy = 0;\n";
  src << "\n";
  for (const auto& f : functions) src << f.text;
  if (!workspaces.empty()) {
    // Unloading the library gives its workspaces back.
    src << "__attribute__((destructor)) static void tessel_free_workspaces(void) {\n";
    for (auto& w : workspaces) src << "  free(" << w << ");\n";
    src << "}\n";
  }
  src << "extern \"C\" const char* tessel_module_manifest(void) { return \"" << escaped << "\"; }\n";
  // What the kernels need of the CPU: the compiler's command line defines it from the target
  // (codegen::compileSharedLibrary), so one source serves every target.
  src << "#ifndef TESSEL_MODULE_REQUIRES\n#define TESSEL_MODULE_REQUIRES \"\"\n#endif\n"
      << "extern \"C\" const char tessel_module_requires[] = TESSEL_MODULE_REQUIRES;\n";
  return src.str();
}

std::string generateCSource(const std::vector<LoweredFunction>& functions) {
  std::vector<CFunctionSource> parts;
  for (const auto& f : functions) parts.push_back(generateCFunction(f));
  return assembleCSource(parts);
}

const char* parallelForSource() { return kParallelFor; }

}  // namespace tessel::codegen
