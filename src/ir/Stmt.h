/// The statement nodes of lowered loop nests: loops, stores, conditionals, blocks, local
/// allocations and pragmas. Immutable and shared like expressions.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/Expr.h"

namespace tessel::ir {

enum class StmtKind { For, Store, IfThenElse, Block, Allocate, Pragma, WarpMma };

struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  StmtKind kind() const { return node_->kind; }
  const StmtNode* get() const { return node_.get(); }
  bool sameAs(const Stmt& other) const { return node_ == other.node_; }
  template <class T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> node_;
};

/// How a loop runs. The GPU kinds are loops bound to a GPU index: the loop is not iterated,
/// its variable is the block or thread index along one dimension of the launch grid, and its
/// extent is that dimension's size (passes/GpuLaunch.h gathers them into the launch).
enum class ForKind { Serial, Parallel, Vectorized, Unrolled, BlockIdxX, BlockIdxY, BlockIdxZ, ThreadIdxX, ThreadIdxY, ThreadIdxZ };
/// "for", "parallel", "vectorized", "unrolled", "blockIdx.x" ... "threadIdx.z".
const char* forKindName(ForKind kind);
/// True for the kinds bound to a GPU block or thread index.
bool isGpuBinding(ForKind kind);

struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var var;
  Expr min, extent;
  ForKind forKind;
  Stmt body;
  ForNode(Var v, Expr m, Expr e, ForKind k, Stmt b)
      : StmtNode(kKind), var(std::move(v)), min(std::move(m)), extent(std::move(e)), forKind(k), body(std::move(b)) {}
};

struct StoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Buffer buffer;
  Expr index;
  Expr value;
  StoreNode(Buffer b, Expr i, Expr v) : StmtNode(kKind), buffer(std::move(b)), index(std::move(i)), value(std::move(v)) {}
};

struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  Expr condition;
  Stmt thenCase, elseCase;  ///< elseCase may be undefined
  IfThenElseNode(Expr c, Stmt t, Stmt e) : StmtNode(kKind), condition(std::move(c)), thenCase(std::move(t)), elseCase(std::move(e)) {}
};

struct BlockNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Block;
  std::vector<Stmt> stmts;
  explicit BlockNode(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
};

struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Buffer buffer;
  Stmt body;
  AllocateNode(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
};

/// A hint for the passes below it, e.g. auto_unroll_max_step.
struct PragmaNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Pragma;
  std::string key, value;
  Stmt body;
  PragmaNode(std::string k, std::string v, Stmt b) : StmtNode(kKind), key(std::move(k)), value(std::move(v)), body(std::move(b)) {}
};

/// The tensor-core instructions `tensorize` can name, by how they take fp32 operands. Tf32: each
/// operand cut to TF32 (10-bit mantissa, rounded toward zero), one product: PyTorch's `allow_tf32` precision.
/// Tf32x3: each operand split into a TF32 value and the TF32 of its remainder, three products
/// (big x big, big x small, small x big; the small x small term is below fp32's rounding): about
/// fp32's accuracy at a third of the TF32 rate, still several times the fp32 units' rate.
enum class WarpMmaKind { Tf32, Tf32x3 };
/// "mma_m16n8k8_tf32", "mma_m16n8k8_3xtf32": the intrinsic's name in schedules.
const char* warpMmaIntrinsicName(WarpMmaKind kind);
/// The kind of an intrinsic name, if it names one.
std::optional<WarpMmaKind> warpMmaIntrinsicOf(const std::string& name);
/// The kind of an intrinsic name; throws Error listing the names.
WarpMmaKind parseWarpMmaIntrinsic(const std::string& name);

/// A warp's matrix multiply-accumulate on tensor cores: what `tensorize` makes of a product's
/// innermost loops on an NVIDIA GPU (passes/TensorizeMma.h). Each thread of the warp holds a
/// `rows` x `columns` sub-tile of the accumulator (a local buffer) and the warp's 32 lanes are
/// 8 x 4 threads: lane l's rows are the (l / 4)-th group of `rows` in the warp's tile, its columns
/// the (l % 4)-th group of `columns`. The node adds the product over `reduction` steps of the
/// rows operand `a` and the columns operand `b` (shared memory) to every lane's sub-tile, in
/// instructions of 16 x 8 x 8 that take the lane's pairs of rows as a fragment's rows g and g + 8
/// (PTX ISA, "Matrix Fragments for mma.m16n8k8"). Each operand is given as the load of the lane's
/// first element (its own first row or column, reduction step 0) and its strides, so the
/// generic traversals see the buffers read and their index arithmetic.
///
/// With `interleavedLanes` the lanes hold the fragments' own layout instead: lane 4g + t holds
/// rows g + 8r and columns t + 4c of the warp's tile (r below `rows`, c below `columns`; the
/// strides are then a lane's step from one of its rows or columns to its next, 8 or 4 of the
/// warp's apart), so a fragment's 8 rows (8 columns) are 8 neighbouring rows (columns) of the
/// operand in shared memory: a warp reads them without bank conflicts and, where the steps are
/// contiguous, with ldmatrix, one instruction a fragment.
struct WarpMmaNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::WarpMma;
  WarpMmaKind intrinsic = WarpMmaKind::Tf32x3;
  Expr accumulator, a, b;  ///< Load nodes: accumulator[row 0, column 0], a[row 0, k 0], b[k 0, column 0]
  int64_t accumulatorRowStride = 0, accumulatorColumnStride = 0;
  int64_t aRowStride = 0, aReductionStride = 0;
  int64_t bReductionStride = 0, bColumnStride = 0;
  int64_t rows = 0, columns = 0, reduction = 0;  ///< a lane's sub-tile and the steps summed
  bool interleavedLanes = false;                 ///< lane 4g + t: rows g + 8r, columns t + 4c
  WarpMmaNode() : StmtNode(kKind) {}
};

Stmt makeFor(Var var, Expr min, Expr extent, ForKind kind, Stmt body);
Stmt makeStore(Buffer buffer, Expr index, Expr value);
Stmt makeIf(Expr condition, Stmt thenCase, Stmt elseCase = Stmt());
/// A block of the defined statements, flattened; a single statement stays itself.
Stmt makeBlock(std::vector<Stmt> stmts);
Stmt makeAllocate(Buffer buffer, Stmt body);
Stmt makePragma(std::string key, std::string value, Stmt body);
Stmt makeWarpMma(const WarpMmaNode& node);

}  // namespace tessel::ir
