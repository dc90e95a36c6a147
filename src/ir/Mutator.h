/// Traversal of the IR: `IRMutator` rebuilds a tree bottom-up (sharing unchanged subtrees),
/// `IRVisitor` walks it read-only; override the hooks for the nodes a pass cares about.
/// Also the everyday helpers built on them: substitution and variable-use queries.
#pragma once
#include <functional>
#include <unordered_map>

#include "ir/Stmt.h"

namespace tessel::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

 protected:
  virtual Expr visitVar(const Expr& e, const VarNode*) { return e; }
  virtual Expr visitBinary(const Expr& e, const BinaryNode* n);
  virtual Expr visitLoad(const Expr& e, const LoadNode* n);
  virtual Expr visitProducerLoad(const Expr& e, const ProducerLoadNode* n);
  virtual Expr visitReduce(const Expr& e, const ReduceNode* n);
  virtual Expr visitSelect(const Expr& e, const SelectNode* n);
  virtual Expr visitRamp(const Expr& e, const RampNode* n);
  virtual Expr visitBroadcast(const Expr& e, const BroadcastNode* n);
  virtual Expr visitCast(const Expr& e, const CastNode* n);
  virtual Expr visitCall(const Expr& e, const CallNode* n);
  virtual Expr visitNot(const Expr& e, const NotNode* n);

  virtual Stmt visitFor(const Stmt& s, const ForNode* n);
  virtual Stmt visitStore(const Stmt& s, const StoreNode* n);
  virtual Stmt visitIf(const Stmt& s, const IfThenElseNode* n);
  virtual Stmt visitBlock(const Stmt& s, const BlockNode* n);
  virtual Stmt visitAllocate(const Stmt& s, const AllocateNode* n);
  virtual Stmt visitPragma(const Stmt& s, const PragmaNode* n);
  virtual Stmt visitWarpMma(const Stmt& s, const WarpMmaNode* n);
};

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr& e);
  virtual void visit(const Stmt& s);
};

/// Calls fn on each direct child expression of e.
void forEachChild(const Expr& e, const std::function<void(const Expr&)>& fn);

using VarMap = std::unordered_map<const VarNode*, Expr>;
Expr substitute(const Expr& e, const VarMap& replacements);
Stmt substitute(const Stmt& s, const VarMap& replacements);
bool usesVar(const Expr& e, const VarNode* var);
bool usesVar(const Stmt& s, const VarNode* var);
/// True if e reads any of the variables for which `pred` holds.
bool usesAnyVar(const Expr& e, const std::function<bool(const VarNode*)>& pred);
/// True if e loads from `buffer`.
bool readsBuffer(const Expr& e, const BufferNode* buffer);
/// True if s loads from or stores to `buffer`.
bool accessesBuffer(const Stmt& s, const BufferNode* buffer);

}  // namespace tessel::ir
