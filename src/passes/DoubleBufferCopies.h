/// What the two lowerings of double-buffered shared copies (schedule::DoubleBufferStep) share:
/// through registers (passes::prefetchDoubleBuffers, DoubleBuffer.cpp) and asynchronous, several
/// stages deep (passes::pipelineAsyncCopies, AsyncCopies.cpp).
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/Stmt.h"

namespace tessel::passes {

/// A serial loop (not bound to the GPU, not parallel or vectorized) as both lowerings take it:
/// the allocations around its body, outermost first, and the statements inside them (the
/// copies sit at the top, inside the allocations of their buffers).
struct SerialLoopBody {
  const ir::ForNode* loop = nullptr;
  std::vector<const ir::AllocateNode*> allocations;
  std::vector<ir::Stmt> stmts;
};
std::optional<SerialLoopBody> serialLoopBody(const ir::Stmt& loop);

/// The pragma lowering puts around a double-buffered copy (schedule::kDoubleBufferPragma).
bool isDoubleBufferedCopy(const ir::Stmt& s);
/// The buffers `s` stores into.
std::set<const ir::BufferNode*> storedBuffers(const ir::Stmt& s);
/// A value a copy loads iterations early must be the same then: device memory that the kernel
/// never writes (`written`). Error naming the stage and the buffer otherwise.
void checkDoubleBufferedSource(const std::string& stage, const ir::Expr& value, const std::set<const ir::BufferNode*>& written);
/// The copies whose loop was unrolled away (or that never had one) stay where they are, their
/// pragmas gone: the device compiler sees the whole straight-line sequence.
ir::Stmt dropDoubleBufferPragmas(const ir::Stmt& s);

}  // namespace tessel::passes
