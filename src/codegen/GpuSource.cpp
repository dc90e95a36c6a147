#include "codegen/GpuSource.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "codegen/GpuIndexWidth.h"
#include "ir/Bounds.h"
#include "ir/Mutator.h"
#include "ir/Simplify.h"
#include "passes/Passes.h"
#include "support/Error.h"

namespace tessel::codegen {

using namespace ir;

const char* gpuDialectName(GpuDialect dialect) { return dialect == GpuDialect::Cuda ? "cuda" : "opencl"; }

namespace {

/// Floor division and modulo (C's / and % truncate), min and max of integers of one C type:
/// the 64-bit ones, and `int` ones (names ending in 32: OpenCL C has no overloading) for
/// kernels whose indices are 32-bit.
std::string integerHelpers(GpuDialect dialect, const std::string& type, const std::string& suffix) {
  std::string q = dialect == GpuDialect::Cuda ? "__device__ __forceinline__ " : "inline ";
  return fmt::format(R"({0}{1} tessel_floordiv{2}({1} a, {1} b) {{
  {1} q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}}
{0}{1} tessel_floormod{2}({1} a, {1} b) {{
  {1} r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}}
{0}{1} tessel_imin{2}({1} a, {1} b) {{ return a < b ? a : b; }}
{0}{1} tessel_imax{2}({1} a, {1} b) {{ return a > b ? a : b; }}
)",
                     q, type, suffix);
}

std::string prelude(GpuDialect dialect) {
  std::string typedefs = dialect == GpuDialect::Cuda ? "typedef long long tessel_i64;\n" : "typedef long tessel_i64;\n";
  return typedefs + integerHelpers(dialect, "tessel_i64", "") + integerHelpers(dialect, "int", "32") + "\n";
}

/// The warp tensor-core product of ir::WarpMmaNode (CUDA, sm_80 and later): each lane loads its
/// fragments of the operands from shared memory (PTX ISA, "Matrix Fragments for mma.m16n8k8":
/// a_r at row g + 8 (r % 2), step t + 4 (r / 2); b_r at step t + 4 r, column g; c_r at row
/// g + 8 (r / 2), column 2t + r % 2, for lane 4g + t), cut to TF32, or split into a TF32
/// value and the TF32 of its remainder for three products (kSplit). A fragment's rows g and g + 8
/// are the lane's own pair of rows 2i, 2i + 1 and its columns 2t, 2t + 1 the lane's own pair 2j,
/// 2j + 1, so every lane's accumulators are its own contiguous sub-tile; the columns operand's
/// fragment column g is then column (g / 2) * kColumns + g % 2 of the warp's.
/// The instruction sums its eight steps in any order, so which reduction step a fragment slot
/// holds is the code's choice as long as both operands agree. kWideA (the rows operand's steps
/// contiguous, every row 16-byte aligned: codegen proves it) gives lane t steps 4t to 4t + 3 of
/// every 16, one float4 load a row where four scalar loads were: slots t and t + 4 of the first
/// instruction hold steps 4t and 4t + 1, of the second 4t + 2 and 4t + 3.
const char* warpMmaHelpers() {
  return R"(__device__ __forceinline__ unsigned tessel_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
/// A value as TF32 (big) and, for three products, the TF32 of its remainder (small). One
/// product takes the value's bits as they are: the instruction reads a .tf32 operand's top 19
/// bits (sign, exponent, 10 bits of mantissa), so the rest is cut off (rounded toward zero) with
/// no instruction, where rounding to nearest would cost one per element.
template <bool kSplit>
__device__ __forceinline__ void tessel_tf32_parts(float x, unsigned& big, unsigned& small) {
  big = kSplit ? tessel_tf32(x) : __float_as_uint(x);
  small = kSplit ? tessel_tf32(x - __uint_as_float(big)) : 0u;
}
__device__ __forceinline__ void tessel_mma_m16n8k8(float* c, int row, int column, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[column]), "+f"(c[row]), "+f"(c[row + column])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/// One step of eight: the fragments' values (av[i][r], bv[j][r] as the fragments' registers)
/// rounded, and the products added; with kSplit the small products to their own accumulators.
template <int kRows, int kColumns, bool kSplit>
__device__ __forceinline__ void tessel_warp_mma_step(float* acc, int accRow, int accColumn, const float (&av)[kRows / 2][4],
                                                     const float (&bv)[kColumns / 2][2], float (&smallA)[kRows / 2][kColumns / 2][4],
                                                     float (&smallB)[kRows / 2][kColumns / 2][4]) {
  unsigned aBig[kRows / 2][4], aSmall[kRows / 2][4], bBig[kColumns / 2][2], bSmall[kColumns / 2][2];
#pragma unroll
  for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) tessel_tf32_parts<kSplit>(av[i][r], aBig[i][r], aSmall[i][r]);
#pragma unroll
  for (int j = 0; j < kColumns / 2; ++j)
#pragma unroll
    for (int r = 0; r < 2; ++r) tessel_tf32_parts<kSplit>(bv[j][r], bBig[j][r], bSmall[j][r]);
#pragma unroll
  for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
    for (int j = 0; j < kColumns / 2; ++j) {
      if (kSplit) {
        tessel_mma_m16n8k8(smallA[i][j], 2, 1, aSmall[i], bBig[j]);
        tessel_mma_m16n8k8(smallB[i][j], 2, 1, aBig[i], bSmall[j]);
      }
      tessel_mma_m16n8k8(acc + 2 * i * accRow + 2 * j * accColumn, accRow, accColumn, aBig[i], bBig[j]);
    }
}
/// The small products' sums added to the accumulators (three products: tessel_warp_mma's kSplit).
template <int kRows, int kColumns>
__device__ __forceinline__ void tessel_warp_mma_add_small(float* acc, int accRow, int accColumn,
                                                          const float (&smallA)[kRows / 2][kColumns / 2][4],
                                                          const float (&smallB)[kRows / 2][kColumns / 2][4]) {
#pragma unroll
  for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
    for (int j = 0; j < kColumns / 2; ++j) {
      float* c = acc + 2 * i * accRow + 2 * j * accColumn;
      c[0] += smallA[i][j][0] + smallB[i][j][0];
      c[accColumn] += smallA[i][j][1] + smallB[i][j][1];
      c[accRow] += smallA[i][j][2] + smallB[i][j][2];
      c[accRow + accColumn] += smallA[i][j][3] + smallB[i][j][3];
    }
}
template <int kRows, int kColumns, int kSteps, bool kSplit, bool kWideA>
__device__ __forceinline__ void tessel_warp_mma(float* acc, int accRow, int accColumn, const float* a, int aRow, int aStep,
                                                const float* b, int bStep, int bColumn) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  b += ((g >> 1) * kColumns + (g & 1) - t * kColumns) * bColumn;
  // The two small products go to accumulators of their own: each chain of dependent
  // instructions is then as long as the steps, not three times as long; added once at the end.
  float smallA[kRows / 2][kColumns / 2][4], smallB[kRows / 2][kColumns / 2][4];
#pragma unroll
  for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
    for (int j = 0; j < kColumns / 2; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) smallA[i][j][r] = smallB[i][j][r] = 0.0f;
  float av[kRows / 2][4], bv[kColumns / 2][2];
  if (kWideA) {
#pragma unroll
    for (int k = 0; k < kSteps; k += 16) {
      float4 rows[kRows / 2][2];
#pragma unroll
      for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) rows[i][h] = *(const float4*)&a[(2 * i + h) * aRow + k + 4 * t];
#pragma unroll
      for (int s = 0; s < 2; ++s) {
#pragma unroll
        for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            av[i][h] = s == 0 ? rows[i][h].x : rows[i][h].z;
            av[i][h + 2] = s == 0 ? rows[i][h].y : rows[i][h].w;
          }
#pragma unroll
        for (int j = 0; j < kColumns / 2; ++j)
#pragma unroll
          for (int r = 0; r < 2; ++r) bv[j][r] = b[2 * j * bColumn + (k + 4 * t + 2 * s + r) * bStep];
        tessel_warp_mma_step<kRows, kColumns, kSplit>(acc, accRow, accColumn, av, bv, smallA, smallB);
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kSteps; k += 8) {
#pragma unroll
      for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r) av[i][r] = a[(2 * i + (r & 1)) * aRow + (k + t + 4 * (r >> 1)) * aStep];
#pragma unroll
      for (int j = 0; j < kColumns / 2; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r) bv[j][r] = b[2 * j * bColumn + (k + t + 4 * r) * bStep];
      tessel_warp_mma_step<kRows, kColumns, kSplit>(acc, accRow, accColumn, av, bv, smallA, smallB);
    }
  }
  if (kSplit) tessel_warp_mma_add_small<kRows, kColumns>(acc, accRow, accColumn, smallA, smallB);
}

/// Four 8 x 8 matrices of 16-bit elements from shared memory, lane l giving the address of row
/// l % 8 of matrix l / 8 (PTX ISA, "ldmatrix"): read as fp32, a matrix is 8 rows of 4 values and
/// lane 4g + t receives row g, value t of each, which is an mma.m16n8k8 fragment register's
/// element. Two matrices: lanes 0 to 15 give the addresses.
__device__ __forceinline__ void tessel_ldmatrix_x4(float (&r)[4], unsigned address) {
  unsigned v0, v1, v2, v3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "r"(address));
  r[0] = __uint_as_float(v0), r[1] = __uint_as_float(v1), r[2] = __uint_as_float(v2), r[3] = __uint_as_float(v3);
}
__device__ __forceinline__ void tessel_ldmatrix_x2(float (&r)[2], unsigned address) {
  unsigned v0, v1;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(v0), "=r"(v1) : "r"(address));
  r[0] = __uint_as_float(v0), r[1] = __uint_as_float(v1);
}
/// tessel_warp_mma with interleaved lanes (ir::WarpMmaNode::interleavedLanes): lane 4g + t holds
/// rows g + 8r and columns t + 4c of the warp's tile, `a` and `b` at its own first row and
/// column, aRow and bColumn one row and one column apart. Fragment i's rows g and g + 8 are the
/// lane's rows 2i and 2i + 1 (the warp's rows 16i + g, 16i + 8 + g), and fragment j's columns
/// 2t, 2t + 1 the lane's columns 2j, 2j + 1 (the warp's t + 8j, t + 8j + 4), so fragment column n
/// is the warp's column n / 2 + 4 (n % 2) + 8j and the accumulators are the lane's sub-tile in
/// order. kMatrixA (kMatrixB): the operand's steps contiguous and its rows 16-byte aligned, every
/// fragment one ldmatrix; otherwise one load a register.
template <int kRows, int kColumns, int kSteps, bool kSplit, bool kMatrixA, bool kMatrixB>
__device__ __forceinline__ void tessel_warp_mma_interleaved(float* acc, int accRow, int accColumn, const float* a, int aRow, int aStep,
                                                            const float* b, int bStep, int bColumn) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, row = lane & 7, matrix = lane >> 3;
  // ldmatrix's row addresses: matrix m of the rows operand is rows 8 (m % 2) + [0, 8), steps
  // 4 (m / 2) + [0, 4) (registers a0 to a3); matrix m of the columns operand is fragment j + m / 2's
  // columns, steps 4 (m % 2) + [0, 4) (b0, b1 of two fragments).
  const unsigned aAddress = (unsigned)__cvta_generic_to_shared(a + (row + 8 * (matrix & 1) - g) * aRow + 4 * (matrix >> 1));
  const unsigned bAddress =
      (unsigned)__cvta_generic_to_shared(b + (row / 2 + 4 * (row & 1) + 8 * (matrix >> 1) - t) * bColumn + 4 * (matrix & 1));
  const float* bFragment = b + (g / 2 + 4 * (g & 1) - t) * bColumn;
  float smallA[kRows / 2][kColumns / 2][4], smallB[kRows / 2][kColumns / 2][4];
#pragma unroll
  for (int i = 0; i < kRows / 2; ++i)
#pragma unroll
    for (int j = 0; j < kColumns / 2; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) smallA[i][j][r] = smallB[i][j][r] = 0.0f;
#pragma unroll
  for (int k = 0; k < kSteps; k += 8) {
    float av[kRows / 2][4], bv[kColumns / 2][2];
#pragma unroll
    for (int i = 0; i < kRows / 2; ++i) {
      if (kMatrixA) {
        tessel_ldmatrix_x4(av[i], aAddress + 4u * unsigned(16 * i * aRow + k));
      } else {
#pragma unroll
        for (int r = 0; r < 4; ++r) av[i][r] = a[(16 * i + 8 * (r & 1)) * aRow + (k + t + 4 * (r >> 1)) * aStep];
      }
    }
#pragma unroll
    for (int j = 0; j < kColumns / 2; j += kMatrixB ? 2 : 1) {
      if (kMatrixB && j + 1 < kColumns / 2) {
        float four[4];
        tessel_ldmatrix_x4(four, bAddress + 4u * unsigned(8 * j * bColumn + k));
        bv[j][0] = four[0], bv[j][1] = four[1], bv[j + 1][0] = four[2], bv[j + 1][1] = four[3];
      } else if (kMatrixB) {
        tessel_ldmatrix_x2(bv[j], bAddress + 4u * unsigned(8 * j * bColumn + k));
      } else {
#pragma unroll
        for (int r = 0; r < 2; ++r) bv[j][r] = bFragment[8 * j * bColumn + (k + t + 4 * r) * bStep];
      }
    }
    tessel_warp_mma_step<kRows, kColumns, kSplit>(acc, accRow, accColumn, av, bv, smallA, smallB);
  }
  if (kSplit) tessel_warp_mma_add_small<kRows, kColumns>(acc, accRow, accColumn, smallA, smallB);
}

)";
}

/// Asynchronous copies from device into shared memory (PTX ISA, "cp.async", sm_80 and later):
/// `bytes` of the source (0 to kBytes; the rest of the kBytes filled with zeros), 16-byte copies
/// bypassing L1 (.cg: the operand tiles are read once per block), grouped by commit and waited
/// for until at most kInFlight groups are outstanding.
const char* asyncCopyHelpers() {
  return R"(template <int kBytes>
__device__ __forceinline__ void tessel_cp_async(void* shared, const void* global, int bytes) {
  const unsigned address = (unsigned)__cvta_generic_to_shared(shared);
  if (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(address), "l"(global), "r"(bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(address), "l"(global), "n"(kBytes), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tessel_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int kInFlight>
__device__ __forceinline__ void tessel_cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(kInFlight) : "memory"); }

)";
}

class KernelPrinter {
 public:
  KernelPrinter(GpuDialect dialect, const passes::GpuLoweredFunction& kernel)
      : dialect(dialect), kernel(kernel), indexBits(gpuIndexBits(kernel.function)) {}

  bool usesWarpMma = false;  ///< the kernel calls tessel_warp_mma (warpMmaHelpers); set by print()
  bool usesAsyncCopies = false;  ///< the kernel calls tessel_cp_async* (asyncCopyHelpers); set by print()

  std::string print() {
    const auto& f = kernel.function;
    std::vector<std::string> params;
    for (size_t i = 0; i < f.args.size(); ++i) {
      const Buffer& b = f.args[i];
      checkStorable(b);
      bool output = i + size_t(f.numOutputs) >= f.args.size();
      std::string qualifier = output ? "" : "const ";
      if (cuda())
        params.push_back(fmt::format("{}{}* __restrict__ {}", qualifier, storageTypeName(b->dtype), bufferName(b)));
      else
        params.push_back(fmt::format("__global {}{}* restrict {}", qualifier, storageTypeName(b->dtype), bufferName(b)));
    }
    if (cuda())
      out << fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({}) {{\n", kernel.launch.threadsPerBlock(),
                         f.name, fmt::join(params, ", "));
    else
      out << fmt::format("__kernel __attribute__((reqd_work_group_size({}, {}, {}))) void {}({}) {{\n",
                         kernel.launch.block[0], kernel.launch.block[1], kernel.launch.block[2], f.name,
                         fmt::join(params, ", "));
    ++indent;
    out << pad() << fmt::format("// {}-bit index arithmetic\n", indexBits);
    declareSharedBuffers(f.body);
    stmt(f.body);
    --indent;
    out << "}\n";
    return out.str();
  }

 private:
  bool cuda() const { return dialect == GpuDialect::Cuda; }
  std::string pad() const { return std::string(size_t(indent) * 2, ' '); }

  [[noreturn]] void unsupported(const std::string& what) const {
    fail("GPU codegen ({}), kernel '{}': {}", gpuDialectName(dialect), kernel.function.name, what);
  }

  void checkStorable(const Buffer& b) const {
    if (b->dtype.isFloat() && b->dtype.bits == 16)
      unsupported(fmt::format("buffer '{}' has dtype {}, which GPU kernels do not support yet", b->name, b->dtype.str()));
  }

  /// The element type of a buffer: a bool is one byte, 0 or 1, as the runtime stores it (and
  /// OpenCL allows no bool in kernel arguments), read as `!= 0` and written as 0 or 1.
  std::string storageTypeName(DataType t) const { return t.isBool() ? typeName(DataType::uint8()) : typeName(t); }

  std::string typeName(DataType t) const {
    if (t.isVector()) unsupported(fmt::format("vector type {} (GPU kernels are scalar per thread)", t.str()));
    if (t.isBool()) return cuda() ? "bool" : "bool";
    if (t.isFloat()) return t.bits == 64 ? "double" : "float";
    bool u = t.isUInt();
    switch (t.bits) {
      case 8: return cuda() ? (u ? "unsigned char" : "signed char") : (u ? "uchar" : "char");
      case 16: return cuda() ? (u ? "unsigned short" : "short") : (u ? "ushort" : "short");
      case 32: return u ? (cuda() ? "unsigned int" : "uint") : "int";
      case 64: return u ? (cuda() ? "unsigned long long" : "ulong") : "tessel_i64";
    }
    unsupported(fmt::format("dtype {}", t.str()));
  }

  /// The C type an expression of type `t` computes in: 64-bit integer expressions are index
  /// arithmetic in a kernel with 32-bit indices (gpuIndexBits excludes 64-bit data), so `int`.
  std::string valueType(DataType t) const {
    return indexBits == 32 && t == DataType::int64() ? "int" : typeName(t);
  }
  /// The suffix of the integer helpers for values of type `t` (see integerHelpers).
  std::string helperSuffix(DataType t) const { return valueType(t) == "int" ? "32" : ""; }

  std::string uniqueName(const std::string& base) {
    std::string clean;
    for (char c : base) clean += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (clean.empty() || std::isdigit(static_cast<unsigned char>(clean[0]))) clean = "v" + clean;
    std::string name = clean;
    for (int n = 1; !usedNames.insert(name).second; ++n) name = fmt::format("{}_{}", clean, n);
    return name;
  }
  std::string varName(const VarNode* v) {
    auto it = varNames.find(v);
    if (it != varNames.end()) return it->second;
    return varNames[v] = uniqueName(v->name);
  }
  std::string bufferName(const Buffer& b) {
    auto it = bufferNames.find(b.get());
    if (it != bufferNames.end()) return it->second;
    return bufferNames[b.get()] = uniqueName(b->name);
  }

  /// OpenCL allows __local variables only at the kernel's outermost scope; CUDA accepts them
  /// anywhere, but one place for both keeps the two printers alike.
  void declareSharedBuffers(const Stmt& body) {
    struct Finder : IRVisitor {
      std::vector<Buffer> shared;
      void visit(const Stmt& s) override {
        if (auto a = s.as<AllocateNode>(); a && a->buffer->scope == BufferNode::Scope::Shared) shared.push_back(a->buffer);
        IRVisitor::visit(s);
      }
    } finder;
    finder.visit(body);
    if (kernel.launch.dynamicShared) {
      // More than a block may declare: one dynamic array that the buffers are carved from, each
      // 16-byte aligned as a declared one would be (the launch passes its size).
      TESSEL_ICHECK(cuda());
      out << pad() << "extern __shared__ __align__(16) unsigned char tessel_dynamic_shared[];\n";
      int64_t offset = 0;
      for (auto& b : finder.shared) {
        checkStorable(b);
        out << pad() << fmt::format("{}* const {} = ({}*)(tessel_dynamic_shared + {});\n", storageTypeName(b->dtype), bufferName(b),
                                    storageTypeName(b->dtype), offset);
        offset += passes::sharedBufferBytes(b->elementCount() * b->dtype.storageBytes());
      }
      return;
    }
    for (auto& b : finder.shared) {
      checkStorable(b);
      // 16-byte aligned: a copy's wide stores (vectorCopy) may address it as float4.
      out << pad() << fmt::format("{} {} {}[{}];\n", cuda() ? "__shared__ __align__(16)" : "__local", storageTypeName(b->dtype), bufferName(b),
                                  b->elementCount());
    }
  }

  std::string indexOf(ForKind kind) const {
    static const char* cudaNames[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    static const char* openclNames[] = {"get_group_id(0)", "get_group_id(1)", "get_group_id(2)",
                                        "get_local_id(0)", "get_local_id(1)", "get_local_id(2)"};
    int i = int(kind) - int(ForKind::BlockIdxX);
    return cuda() ? cudaNames[i] : openclNames[i];
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::Block:
        for (auto& x : s.as<BlockNode>()->stmts) stmt(x);
        return;
      case StmtKind::Store: {
        auto n = s.as<StoreNode>();
        if (n->index.type().isVector()) {
          vectorCopy(n);
          return;
        }
        std::string value = expr(n->value);
        if (n->buffer->dtype.isBool()) value = fmt::format("(({}) ? 1 : 0)", value);
        out << pad() << fmt::format("{}[{}] = {};\n", bufferName(n->buffer), bufferIndex(n->buffer, n->index), value);
        return;
      }
      case StmtKind::IfThenElse: {
        auto n = s.as<IfThenElseNode>();
        out << pad() << "if (" << expr(n->condition) << ") {\n";
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
      case StmtKind::Pragma: {
        auto p = s.as<PragmaNode>();
        if (passes::isGpuBarrier(s)) {
          out << pad() << (cuda() ? "__syncthreads();\n" : "barrier(CLK_LOCAL_MEM_FENCE);\n");
          return;
        }
        if (p->key == passes::kAsyncCopyPragma) {
          asyncCopy(p);
          return;
        }
        if (p->key == passes::kAsyncCommitPragma || p->key == passes::kAsyncWaitPragma) {
          if (!cuda()) unsupported("asynchronous copies into shared memory need CUDA (sm_80 and later)");
          usesAsyncCopies = true;
          out << pad()
              << (p->key == passes::kAsyncCommitPragma ? std::string("tessel_cp_async_commit();\n")
                                                        : fmt::format("tessel_cp_async_wait<{}>();\n", p->value));
          return;
        }
        out << pad() << "// pragma " << p->key << " = " << p->value << "\n";
        stmt(p->body);
        return;
      }
      case StmtKind::WarpMma: {
        auto n = s.as<WarpMmaNode>();
        if (!cuda()) unsupported(fmt::format("the tensor-core intrinsic {} needs CUDA", warpMmaIntrinsicName(n->intrinsic)));
        TESSEL_CHECK(kernel.launch.extentOf(ForKind::ThreadIdxX) % 32 == 0,
                     "GPU codegen (cuda), kernel '{}': {} needs whole warps along threadIdx.x, and the block has {} threads there",
                     kernel.function.name, warpMmaIntrinsicName(n->intrinsic), kernel.launch.extentOf(ForKind::ThreadIdxX));
        usesWarpMma = true;
        auto address = [&](const Expr& e) {
          auto l = e.as<LoadNode>();
          return fmt::format("&{}[{}]", bufferName(l->buffer), bufferIndex(l->buffer, l->index));
        };
        auto aLoad = n->a.as<LoadNode>(), bLoad = n->b.as<LoadNode>();
        const char* split = n->intrinsic == WarpMmaKind::Tf32x3 ? "true" : "false";
        if (n->interleavedLanes) {
          // The lane's strides are 8 rows and 4 columns of the warp's (the tensorizer's check).
          int64_t aRow = n->aRowStride / 8, bColumn = n->bColumnStride / 4;
          // ldmatrix: the steps contiguous and every row 16-byte aligned.
          auto matrix = [&](const LoadNode* l, int64_t stepStride, int64_t rowStride) {
            return stepStride == 1 && rowStride % 4 == 0 && alignedTo(l->buffer, l->index, 4) ? "true" : "false";
          };
          out << pad()
              << fmt::format("tessel_warp_mma_interleaved<{}, {}, {}, {}, {}, {}>({}, {}, {}, {}, {}, {}, {}, {}, {});\n", n->rows,
                             n->columns, n->reduction, split, matrix(aLoad, n->aReductionStride, aRow),
                             matrix(bLoad, n->bReductionStride, bColumn), address(n->accumulator), n->accumulatorRowStride,
                             n->accumulatorColumnStride, address(n->a), aRow, n->aReductionStride, address(n->b), n->bReductionStride,
                             bColumn);
          return;
        }
        // The rows operand's float4 loads (tessel_warp_mma's kWideA): its steps contiguous, every
        // row the lane reads 16-byte aligned, two instructions' steps a load.
        bool wideA = n->aReductionStride == 1 && n->aRowStride % 4 == 0 && n->reduction % 16 == 0 && alignedTo(aLoad->buffer, aLoad->index, 4);
        out << pad()
            << fmt::format("tessel_warp_mma<{}, {}, {}, {}, {}>({}, {}, {}, {}, {}, {}, {}, {}, {});\n", n->rows, n->columns, n->reduction,
                           split, wideA ? "true" : "false", address(n->accumulator), n->accumulatorRowStride,
                           n->accumulatorColumnStride, address(n->a), n->aRowStride, n->aReductionStride, address(n->b),
                           n->bReductionStride, n->bColumnStride);
        return;
      }
      case StmtKind::Allocate: {
        auto n = s.as<AllocateNode>();
        if (n->buffer->scope == BufferNode::Scope::Local) {
          checkStorable(n->buffer);
          out << pad() << fmt::format("{} {}[{}];\n", storageTypeName(n->buffer->dtype), bufferName(n->buffer), n->buffer->elementCount());
        } else if (n->buffer->scope == BufferNode::Scope::Global) {
          unsupported(fmt::format("buffer '{}' needs device memory for the whole call", n->buffer->name));
        }
        stmt(n->body);
        return;
      }
      case StmtKind::For: {
        auto n = s.as<ForNode>();
        std::string v = varName(n->var.node());
        if (isGpuBinding(n->forKind)) {
          const int64_t* extent = asConstInt(n->extent);
          TESSEL_ICHECK(extent);
          out << pad() << "{\n";
          ++indent;
          std::string type = valueType(n->var.type());
          out << pad() << fmt::format("const {0} {1} = ({0}){2};\n", type, v, indexOf(n->forKind));
          bool guarded = *extent < kernel.launch.extentOf(n->forKind);
          if (guarded) {
            out << pad() << fmt::format("if ({} < {}) {{\n", v, *extent);
            ++indent;
          }
          enterLoop(n);
          stmt(n->body);
          bounds.erase(n->var.node());
          if (guarded) {
            --indent;
            out << pad() << "}\n";
          }
          --indent;
          out << pad() << "}\n";
          return;
        }
        if (n->forKind == ForKind::Parallel) unsupported(fmt::format("loop '{}' is parallel", n->var.name()));
        if (n->forKind == ForKind::Unrolled) out << pad() << "#pragma unroll\n";
        std::string lo = expr(n->min);
        out << pad() << fmt::format("for ({0} {1} = {2}; {1} < {2} + {3}; ++{1}) {{\n", valueType(n->var.type()), v, lo, expr(n->extent));
        ++indent;
        enterLoop(n);
        stmt(n->body);
        bounds.erase(n->var.node());
        --indent;
        out << pad() << "}\n";
        return;
      }
    }
  }

  /// A store into shared memory issued as `cp.async` (passes::asyncCopyFormOf says how): one
  /// copy of 4, 8 or 16 bytes, or element by element where the vector's addresses are not aligned
  /// to its size (a synchronous store would wait for its load before the block computes); a
  /// guarded one reads 0 bytes (zeros) where its guard fails. Synchronous where the value is not
  /// such a load (the pipeline's barriers order either).
  void asyncCopy(const PragmaNode* p) {
    if (!cuda()) unsupported("asynchronous copies into shared memory need CUDA (sm_80 and later)");
    auto n = p->body.as<StoreNode>();
    TESSEL_CHECK(n, "GPU codegen (cuda), kernel '{}': the asynchronous copy of '{}' is not one store", kernel.function.name, p->value);
    auto form = passes::asyncCopyFormOf(n);
    if (!form) {
      stmt(p->body);
      return;
    }
    // Lane i's index of a vector access: its ramp's base + i x stride.
    auto laneIndex = [](const Expr& index, int lane) {
      auto r = index.as<RampNode>();
      return !r ? index : lane == 0 ? r->base : r->base + r->stride * Expr(int64_t(lane));
    };
    const int lanes = n->index.type().lanes, pieces = form->whole ? 1 : lanes;
    const int bytes = form->whole ? lanes * form->elementBytes : form->elementBytes;
    usesAsyncCopies = true;
    std::string size = form->condition.defined() ? fmt::format("({}) ? {} : 0", expr(form->condition), bytes) : std::to_string(bytes);
    const LoadNode* source = form->source;
    for (int i = 0; i < pieces; ++i)
      out << pad()
          << fmt::format("tessel_cp_async<{}>(&{}[{}], &{}[{}], {});\n", bytes, bufferName(n->buffer), bufferIndex(n->buffer, laneIndex(n->index, i)),
                         bufferName(source->buffer), bufferIndex(source->buffer, laneIndex(source->index, i)), size);
  }

  /// A dense copy of 2 or 4 lanes of 32-bit elements (passes::vectorizeCopies): one wide load
  /// and store where the addresses are provably aligned to the access, element by element where
  /// not (a shared copy's rows padded against bank conflicts). OpenCL's vloadn/vstoren need only
  /// the element's alignment.
  void vectorCopy(const StoreNode* n) {
    auto target = n->index.as<RampNode>();
    int lanes = n->index.type().lanes;
    DataType element = n->buffer->dtype;
    if (!target || (lanes != 2 && lanes != 4) || element.bits != 32 || element.isBool())
      unsupported(fmt::format("a vector store of {} lanes of {} into '{}' (GPU kernels copy 2 or 4 lanes of 32-bit elements)", lanes,
                              element.str(), n->buffer->name));
    std::string scalar = storageTypeName(element);
    std::string vector = fmt::format("{}{}", element.isFloat() ? "float" : element.isUInt() ? "uint" : "int", lanes);
    std::string value;
    if (auto b = n->value.as<BroadcastNode>()) {
      std::string one = expr(b->value);
      value = cuda() ? fmt::format("make_{}({})", vector, joinLanes(lanes, [&](int) { return one; }))
                     : fmt::format("(({})({}))", vector, one);
    } else if (auto l = n->value.as<LoadNode>(); l && l->index.as<RampNode>()) {
      const Expr& first = l->index.as<RampNode>()->base;
      std::string base = bufferIndex(l->buffer, first), source = bufferName(l->buffer);
      if (!cuda()) value = fmt::format("vload{}(0, &{}[{}])", lanes, source, base);
      else if (alignedTo(l->buffer, first, lanes))
        value = fmt::format("(*(const {}*)&{}[{}])", vector, source, base);
      else
        value = fmt::format("make_{}({})", vector, joinLanes(lanes, [&](int i) { return fmt::format("{}[{} + {}]", source, base, i); }));
    } else {
      unsupported(fmt::format("a vector store into '{}' of a value other than a copy (GPU kernels compute per lane)", n->buffer->name));
    }
    std::string base = bufferIndex(n->buffer, target->base), name = bufferName(n->buffer);
    if (!cuda()) {
      out << pad() << fmt::format("vstore{}({}, 0, &{}[{}]);\n", lanes, value, name, base);
    } else if (alignedTo(n->buffer, target->base, lanes)) {
      out << pad() << fmt::format("*({}*)&{}[{}] = {};\n", vector, name, base, value);
    } else {
      static const char* fields[] = {"x", "y", "z", "w"};
      out << pad() << fmt::format("{{ const {} v = {};", vector, value);
      for (int i = 0; i < lanes; ++i) out << fmt::format(" {}[{} + {}] = ({})v.{};", name, base, i, scalar, fields[i]);
      out << " }\n";
    }
  }
  static std::string joinLanes(int lanes, const std::function<std::string(int)>& lane) {
    std::string text;
    for (int i = 0; i < lanes; ++i) text += (i ? ", " : "") + lane(i);
    return text;
  }
  /// True if element `index` of `buffer` starts an aligned access of `lanes` elements: kernel
  /// arguments are whole allocations (cuMemAlloc aligns them to 256 bytes; the runtime passes no
  /// views) and shared arrays are declared 16-byte aligned; registers are not addressed so.
  static bool alignedTo(const Buffer& buffer, const Expr& index, int lanes) {
    if (buffer->scope != BufferNode::Scope::Global && buffer->scope != BufferNode::Scope::Shared) return false;
    return ir::knownDivisor(index) % lanes == 0;  // 0: the index is 0
  }

  /// The index of a load or store. In a 32-bit kernel a global buffer's index adds its terms
  /// (and multiplies them by their constant factors) in 64 bits, each term computed in 32:
  /// widened after a 32-bit sum, which as far as the compiler knows may wrap, every load needs
  /// its own 64-bit add (resnet-18's split convolutions' inner loops took 86 PTX instructions
  /// instead of 50); widened term by term, constant terms fold into the loads' offsets and a
  /// loop's term steps the address. Local and shared arrays are small: their indices stay 32-bit.
  std::string bufferIndex(const Buffer& buffer, const Expr& e) {
    if (indexBits != 32 || buffer->scope != BufferNode::Scope::Global || e.as<IntImmNode>()) return expr(e);
    return widenedTerms(e);
  }
  std::string widenedTerms(const Expr& e) {
    if (e.type() != DataType::int64()) return expr(e);
    // Only the binary kinds below are BinaryNodes: cast after the kind is known.
    auto binary = [&] { return static_cast<const BinaryNode*>(e.get()); };
    switch (e.kind()) {
      case ExprKind::IntImm: return fmt::format("((tessel_i64){}LL)", e.as<IntImmNode>()->value);
      case ExprKind::Add: return fmt::format("({} + {})", widenedTerms(binary()->a), widenedTerms(binary()->b));
      case ExprKind::Sub: return fmt::format("({} - {})", widenedTerms(binary()->a), widenedTerms(binary()->b));
      case ExprKind::Mul:
        if (asConstInt(binary()->b)) return fmt::format("({} * {})", widenedTerms(binary()->a), widenedTerms(binary()->b));
        break;
      default: break;
    }
    return fmt::format("((tessel_i64){})", expr(e));
  }

  /// The range of a loop's variable, for the expressions inside it (see expr's division).
  void enterLoop(const ForNode* n) {
    Interval lo = constBounds(n->min, bounds), extent = constBounds(n->extent, bounds);
    Interval range = Interval::everything();
    if (lo.bounded() && extent.boundedAbove()) range = {lo.min, lo.max + extent.max - 1};
    bounds[n->var.node()] = range;
  }

  std::string constant(const Expr& e) {
    if (auto i = e.as<IntImmNode>()) {
      if (e.type().isBool()) return i->value ? "true" : "false";
      if (valueType(e.type()) == "int") {  // within int32: gpuIndexBits checked every value
        if (i->value == INT32_MIN) return "(-2147483647 - 1)";
        return i->value < 0 ? fmt::format("({})", i->value) : std::to_string(i->value);
      }
      if (e.type() == DataType::int64()) {
        if (i->value == INT64_MIN) return "((tessel_i64)(-9223372036854775807LL - 1))";
        return fmt::format("((tessel_i64){}LL)", i->value);
      }
      return fmt::format("(({}){})", typeName(e.type()), i->value);
    }
    double v = e.as<FloatImmNode>()->value;
    bool single = e.type().bits != 64;
    if (std::isinf(v) || std::isnan(v)) {
      std::string bits = std::isnan(v) ? "0x7fc00000" : (v > 0 ? "0x7f800000" : "0xff800000");
      std::string value = cuda() ? fmt::format("__int_as_float({})", bits) : fmt::format("as_float({}u)", bits);
      return single ? value : fmt::format("((double){})", value);
    }
    std::string text = fmt::format("{:.17g}", v);
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return single ? text + "f" : text;
  }

  std::string mathCall(Intrinsic op, DataType t, const std::vector<std::string>& a) {
    // CUDA spells the float versions with an f suffix; OpenCL's built-ins are overloaded.
    std::string f = cuda() && t.bits != 64 ? "f" : "";
    std::string one = t.bits == 64 ? "1.0" : "1.0f";
    switch (op) {
      case Intrinsic::Exp: return fmt::format("exp{}({})", f, a[0]);
      case Intrinsic::Log: return fmt::format("log{}({})", f, a[0]);
      case Intrinsic::Sqrt: return fmt::format("sqrt{}({})", f, a[0]);
      case Intrinsic::Rsqrt: return fmt::format("rsqrt{}({})", f, a[0]);
      case Intrinsic::Tanh: return fmt::format("tanh{}({})", f, a[0]);
      case Intrinsic::Sigmoid: return fmt::format("({0} / ({0} + exp{1}(-({2}))))", one, f, a[0]);
      case Intrinsic::Erf: return fmt::format("erf{}({})", f, a[0]);
      case Intrinsic::Pow: return fmt::format("pow{}({}, {})", f, a[0], a[1]);
      case Intrinsic::Abs:
        if (t.isFloat()) return fmt::format("fabs{}({})", f, a[0]);
        return fmt::format("({0} < 0 ? ({1})(-{0}) : {0})", a[0], valueType(t));
      case Intrinsic::Floor: return fmt::format("floor{}({})", f, a[0]);
      case Intrinsic::Ceil: return fmt::format("ceil{}({})", f, a[0]);
      case Intrinsic::Round: return fmt::format("round{}({})", f, a[0]);
    }
    unsupported(fmt::format("intrinsic {}", intrinsicName(op)));
  }

  std::string expr(const Expr& e) {
    if (e.type().isVector()) unsupported(fmt::format("vector expression of type {}", e.type().str()));
    switch (e.kind()) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm: return constant(e);
      case ExprKind::Var: return varName(e.as<VarNode>());
      case ExprKind::Not: return fmt::format("(!{})", expr(e.as<NotNode>()->a));
      case ExprKind::Select:
      case ExprKind::IfThenElse: {
        auto n = static_cast<const SelectNode*>(e.get());
        return fmt::format("({} ? {} : {})", expr(n->condition), expr(n->trueValue), expr(n->falseValue));
      }
      case ExprKind::Cast: return fmt::format("(({})({}))", valueType(e.type()), expr(e.as<CastNode>()->value));
      case ExprKind::Call: {
        std::vector<std::string> args;
        for (auto& a : e.as<CallNode>()->args) args.push_back(expr(a));
        return mathCall(e.as<CallNode>()->op, e.type(), args);
      }
      case ExprKind::Load: {
        auto n = e.as<LoadNode>();
        std::string element = fmt::format("{}[{}]", bufferName(n->buffer), bufferIndex(n->buffer, n->index));
        return n->buffer->dtype.isBool() ? fmt::format("({} != 0)", element) : element;
      }
      case ExprKind::ProducerLoad:
      case ExprKind::Reduce:
      case ExprKind::Ramp:
      case ExprKind::Broadcast: unsupported(fmt::format("unexpected expression kind {} after lowering", int(e.kind())));
      default: break;
    }
    auto n = static_cast<const BinaryNode*>(e.get());
    std::string a = expr(n->a), b = expr(n->b);
    DataType t = n->a.type();
    std::string type = valueType(t), suffix = helperSuffix(t);
    // Flooring equals C's truncation for a non-negative dividend and a positive divisor: the
    // common case of index arithmetic, and a compiler turns a constant divisor into a multiply.
    bool truncates = false;
    if (e.kind() == ExprKind::FloorDiv || e.kind() == ExprKind::FloorMod) {
      const int64_t* divisor = asConstInt(n->b);
      truncates = divisor && *divisor > 0 && constBounds(n->a, bounds).min >= 0;
    }
    switch (e.kind()) {
      case ExprKind::Add: return fmt::format("({} + {})", a, b);
      case ExprKind::Sub: return fmt::format("({} - {})", a, b);
      case ExprKind::Mul: return fmt::format("({} * {})", a, b);
      case ExprKind::Div: return fmt::format("({} / {})", a, b);
      case ExprKind::Mod: return fmt::format("({} % {})", a, b);
      case ExprKind::FloorDiv:
        if (truncates) return fmt::format("({} / {})", a, b);
        return fmt::format("(({})tessel_floordiv{}({}, {}))", type, suffix, a, b);
      case ExprKind::FloorMod:
        if (truncates) return fmt::format("({} % {})", a, b);
        return fmt::format("(({})tessel_floormod{}({}, {}))", type, suffix, a, b);
      case ExprKind::Min:
        if (t.isFloat()) return fmt::format("fmin{}({}, {})", cuda() && t.bits != 64 ? "f" : "", a, b);
        return fmt::format("(({})tessel_imin{}({}, {}))", type, suffix, a, b);
      case ExprKind::Max:
        if (t.isFloat()) return fmt::format("fmax{}({}, {})", cuda() && t.bits != 64 ? "f" : "", a, b);
        return fmt::format("(({})tessel_imax{}({}, {}))", type, suffix, a, b);
      case ExprKind::EQ: return fmt::format("({} == {})", a, b);
      case ExprKind::NE: return fmt::format("({} != {})", a, b);
      case ExprKind::LT: return fmt::format("({} < {})", a, b);
      case ExprKind::LE: return fmt::format("({} <= {})", a, b);
      case ExprKind::GT: return fmt::format("({} > {})", a, b);
      case ExprKind::GE: return fmt::format("({} >= {})", a, b);
      case ExprKind::And: return fmt::format("({} && {})", a, b);
      case ExprKind::Or: return fmt::format("({} || {})", a, b);
      default: unsupported(fmt::format("expression kind {}", int(e.kind())));
    }
  }

  GpuDialect dialect;
  const passes::GpuLoweredFunction& kernel;
  int indexBits;      ///< 32 or 64 (gpuIndexBits)
  VarBounds bounds;   ///< the loops' variables in scope
  std::ostringstream out;
  int indent = 0;
  std::set<std::string> usedNames;
  std::map<const VarNode*, std::string> varNames;
  std::map<const BufferNode*, std::string> bufferNames;
};

nlohmann::json manifestEntry(const passes::GpuLoweredFunction& kernel) {
  const auto& f = kernel.function;
  nlohmann::json args = nlohmann::json::array();
  for (auto& b : f.args) args.push_back({{"name", b->name}, {"dtype", b->dtype.str()}, {"shape", b->shape}});
  return {{"name", f.name}, {"args", args}, {"outputs", f.numOutputs}, {"launch", kernel.launch.toJson()}};
}

}  // namespace

GpuSource generateGpuSource(const std::vector<passes::GpuLoweredFunction>& kernels, GpuDialect dialect) {
  GpuSource source{dialect, prelude(dialect), {}};
  source.manifest = {{"device", gpuDialectName(dialect)}, {"kernels", nlohmann::json::array()}};
  std::set<std::string> names;
  std::string kernelCode;
  bool warpMma = false, asyncCopies = false;
  for (auto& k : kernels) {
    TESSEL_CHECK(names.insert(k.function.name).second, "GPU codegen: two kernels are named '{}'", k.function.name);
    KernelPrinter printer(dialect, k);
    kernelCode += printer.print() + "\n";
    warpMma = warpMma || printer.usesWarpMma;
    asyncCopies = asyncCopies || printer.usesAsyncCopies;
    source.manifest["kernels"].push_back(manifestEntry(k));
  }
  if (warpMma) source.code += warpMmaHelpers();
  if (asyncCopies) source.code += asyncCopyHelpers();
  source.code += kernelCode;
  return source;
}

}  // namespace tessel::codegen
