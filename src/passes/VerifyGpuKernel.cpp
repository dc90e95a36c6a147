#include "passes/VerifyGpuKernel.h"

#include "ir/Mutator.h"
#include "support/Error.h"

namespace tessel::passes {

using namespace ir;

namespace {

class KernelChecker : public IRVisitor {
 public:
  KernelChecker(const std::string& kernel, const GpuLimits& limits) : kernel(kernel), limits(limits) {}

  void visit(const Stmt& s) override {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::For: {
        auto f = s.as<ForNode>();
        TESSEL_CHECK(f->forKind != ForKind::Parallel,
                     "GPU kernel '{}': loop '{}' is annotated parallel; bind it to blockIdx or threadIdx instead", kernel,
                     f->var.name());
        bool bound = isGpuBinding(f->forKind);
        bindingDepth += bound;
        IRVisitor::visit(s);
        bindingDepth -= bound;
        return;
      }
      case StmtKind::Store: {
        auto st = s.as<StoreNode>();
        TESSEL_CHECK(st->buffer->scope != BufferNode::Scope::Global || bindingDepth > 0,
                     "GPU kernel '{}': the store to '{}' is outside every blockIdx/threadIdx loop, so every thread "
                     "would run it; bind the loops of its stage",
                     kernel, st->buffer->name);
        break;
      }
      case StmtKind::Allocate: {
        auto a = s.as<AllocateNode>();
        int64_t bytes = a->buffer->elementCount() * a->buffer->dtype.storageBytes();
        TESSEL_CHECK(a->buffer->scope != BufferNode::Scope::Global,
                     "GPU kernel '{}': '{}' is a whole-call intermediate buffer (a stage computed at the root); on a "
                     "GPU compute it inline or at a loop of its consumer",
                     kernel, a->buffer->name);
        if (a->buffer->scope == BufferNode::Scope::Local) {
          TESSEL_CHECK(bindingDepth > 0,
                       "GPU kernel '{}': local buffer '{}' is allocated outside every blockIdx/threadIdx loop; compute its "
                       "stage inside the bound loops, or give it the shared scope",
                       kernel, a->buffer->name);
          localBytes += bytes;
          TESSEL_CHECK(localBytes <= limits.maxLocalMemoryPerThread,
                       "GPU kernel '{}': {} bytes of local memory per thread (buffer '{}') exceed the limit of {} ({})",
                       kernel, localBytes, a->buffer->name, limits.maxLocalMemoryPerThread, limits.profile);
        }
        break;
      }
      case StmtKind::Pragma: {
        auto p = s.as<PragmaNode>();
        if (p->key == "virtual_thread") {
          int64_t extent = std::stoll(p->value);
          TESSEL_CHECK(extent <= limits.maxVThreadExtent,
                       "GPU kernel '{}': a virtual thread extent of {} exceeds the limit of {} ({})", kernel, extent,
                       limits.maxVThreadExtent, limits.profile);
        }
        break;
      }
      default: break;
    }
    IRVisitor::visit(s);
  }

  const std::string& kernel;
  const GpuLimits& limits;
  int bindingDepth = 0;
  int64_t localBytes = 0;
};

}  // namespace

void verifyGpuKernel(const schedule::LoopNestFunction& kernel, const GpuLaunch& launch, const GpuLimits& limits) {
  const std::string& name = kernel.name;
  TESSEL_CHECK(launch.threadsPerBlock() <= limits.maxThreadsPerBlock,
               "GPU kernel '{}': {} threads per block ({}x{}x{}) exceed the limit of {} ({})", name, launch.threadsPerBlock(),
               launch.block[0], launch.block[1], launch.block[2], limits.maxThreadsPerBlock, limits.profile);
  static const char* axes[] = {"x", "y", "z"};
  for (size_t d = 0; d < 3; ++d)
    TESSEL_CHECK(launch.block[d] <= limits.maxBlockDimensions[d],
                 "GPU kernel '{}': {} threads along threadIdx.{} exceed the limit of {} ({})", name, launch.block[d], axes[d],
                 limits.maxBlockDimensions[d], limits.profile);
  TESSEL_CHECK(launch.sharedBytes <= limits.sharedMemoryLimit(),
               "GPU kernel '{}': {} bytes of shared memory per block exceed the limit of {}{} ({})", name, launch.sharedBytes,
               limits.sharedMemoryLimit(), limits.maxDynamicSharedMemoryPerBlock > 0 ? " (dynamic shared memory included)" : "",
               limits.profile);
  KernelChecker checker(name, limits);
  checker.visit(kernel.body);
}

}  // namespace tessel::passes
