#include "ir/Stmt.h"

#include "support/Error.h"

namespace tessel::ir {

const char* forKindName(ForKind kind) {
  switch (kind) {
    case ForKind::Serial: return "for";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::BlockIdxX: return "blockIdx.x";
    case ForKind::BlockIdxY: return "blockIdx.y";
    case ForKind::BlockIdxZ: return "blockIdx.z";
    case ForKind::ThreadIdxX: return "threadIdx.x";
    case ForKind::ThreadIdxY: return "threadIdx.y";
    case ForKind::ThreadIdxZ: return "threadIdx.z";
  }
  return "?";
}

bool isGpuBinding(ForKind kind) { return kind >= ForKind::BlockIdxX; }

Stmt makeFor(Var var, Expr min, Expr extent, ForKind kind, Stmt body) {
  TESSEL_ICHECK(body.defined());
  return Stmt(std::make_shared<ForNode>(std::move(var), std::move(min), std::move(extent), kind, std::move(body)));
}

Stmt makeStore(Buffer buffer, Expr index, Expr value) {
  return Stmt(std::make_shared<StoreNode>(std::move(buffer), std::move(index), std::move(value)));
}

Stmt makeIf(Expr condition, Stmt thenCase, Stmt elseCase) {
  return Stmt(std::make_shared<IfThenElseNode>(std::move(condition), std::move(thenCase), std::move(elseCase)));
}

Stmt makeBlock(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s.defined()) continue;
    if (auto b = s.as<BlockNode>()) {
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
    } else {
      flat.push_back(s);
    }
  }
  if (flat.empty()) return Stmt(std::make_shared<BlockNode>(std::vector<Stmt>{}));
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<BlockNode>(std::move(flat)));
}

Stmt makeAllocate(Buffer buffer, Stmt body) { return Stmt(std::make_shared<AllocateNode>(std::move(buffer), std::move(body))); }

Stmt makePragma(std::string key, std::string value, Stmt body) {
  return Stmt(std::make_shared<PragmaNode>(std::move(key), std::move(value), std::move(body)));
}

const char* warpMmaIntrinsicName(WarpMmaKind kind) {
  return kind == WarpMmaKind::Tf32 ? "mma_m16n8k8_tf32" : "mma_m16n8k8_3xtf32";
}

std::optional<WarpMmaKind> warpMmaIntrinsicOf(const std::string& name) {
  for (WarpMmaKind kind : {WarpMmaKind::Tf32, WarpMmaKind::Tf32x3})
    if (name == warpMmaIntrinsicName(kind)) return kind;
  return std::nullopt;
}

WarpMmaKind parseWarpMmaIntrinsic(const std::string& name) {
  if (auto kind = warpMmaIntrinsicOf(name)) return *kind;
  fail("unknown tensor intrinsic '{}': the intrinsics are {} and {}", name, warpMmaIntrinsicName(WarpMmaKind::Tf32),
       warpMmaIntrinsicName(WarpMmaKind::Tf32x3));
}

Stmt makeWarpMma(const WarpMmaNode& node) {
  TESSEL_ICHECK(node.accumulator.as<LoadNode>() && node.a.as<LoadNode>() && node.b.as<LoadNode>());
  return Stmt(std::make_shared<WarpMmaNode>(node));
}

}  // namespace tessel::ir
