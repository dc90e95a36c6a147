#include "passes/GpuLaunch.h"

#include "ir/Mutator.h"
#include "support/Error.h"

namespace tessel::passes {

using namespace ir;

namespace {

/// 0..2 for x..z of a binding kind.
int dimensionOf(ForKind kind) {
  switch (kind) {
    case ForKind::BlockIdxX:
    case ForKind::ThreadIdxX: return 0;
    case ForKind::BlockIdxY:
    case ForKind::ThreadIdxY: return 1;
    default: return 2;
  }
}

bool isBlockBinding(ForKind kind) { return kind == ForKind::BlockIdxX || kind == ForKind::BlockIdxY || kind == ForKind::BlockIdxZ; }

class LaunchReader : public IRVisitor {
 public:
  GpuLaunch launch;

  void visit(const Stmt& s) override {
    if (auto f = s.as<ForNode>(); f && isGpuBinding(f->forKind)) {
      const int64_t* extent = asConstInt(f->extent);
      TESSEL_CHECK(extent && *extent > 0, "GPU kernel: loop '{}' bound to {} has extent that is not a positive constant",
                   f->var.name(), forKindName(f->forKind));
      TESSEL_CHECK(isConstInt(f->min, 0), "GPU kernel: loop '{}' bound to {} must start at 0", f->var.name(),
                   forKindName(f->forKind));
      auto& dims = isBlockBinding(f->forKind) ? launch.grid : launch.block;
      int64_t& d = dims[size_t(dimensionOf(f->forKind))];
      d = std::max(d, *extent);
    }
    if (auto a = s.as<AllocateNode>(); a && a->buffer->scope == BufferNode::Scope::Shared)
      launch.sharedBytes += sharedBufferBytes(a->buffer->elementCount() * a->buffer->dtype.storageBytes());
    IRVisitor::visit(s);
  }
};

}  // namespace

int64_t GpuLaunch::extentOf(ForKind kind) const {
  TESSEL_ICHECK(isGpuBinding(kind));
  return (isBlockBinding(kind) ? grid : block)[size_t(dimensionOf(kind))];
}

nlohmann::json GpuLaunch::toJson() const {
  nlohmann::json json = {{"grid", grid}, {"block", block}, {"shared_bytes", sharedBytes}};
  if (dynamicShared) json["dynamic_shared"] = true;  // absent in the modules of every kernel before it
  return json;
}

GpuLaunch GpuLaunch::fromJson(const nlohmann::json& json) {
  GpuLaunch launch;
  for (const char* key : {"grid", "block"}) {
    TESSEL_CHECK(json.contains(key) && json.at(key).is_array() && json.at(key).size() == 3,
                 "GPU launch: '{}' must be an array of 3 dimensions", key);
    auto& dims = std::string(key) == "grid" ? launch.grid : launch.block;
    for (size_t d = 0; d < 3; ++d) {
      const auto& v = json.at(key)[d];
      TESSEL_CHECK(v.is_number_integer() && v.get<int64_t>() > 0, "GPU launch: '{}'[{}] must be a positive integer", key, d);
      dims[d] = v.get<int64_t>();
    }
  }
  if (json.contains("shared_bytes")) {
    const auto& v = json.at("shared_bytes");
    TESSEL_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0, "GPU launch: 'shared_bytes' must be a non-negative integer");
    launch.sharedBytes = v.get<int64_t>();
  }
  if (json.contains("dynamic_shared")) {
    TESSEL_CHECK(json.at("dynamic_shared").is_boolean(), "GPU launch: 'dynamic_shared' must be true or false");
    launch.dynamicShared = json.at("dynamic_shared").get<bool>();
  }
  return launch;
}

GpuLaunch gpuLaunchOf(const Stmt& body) {
  LaunchReader reader;
  reader.visit(body);
  return reader.launch;
}

}  // namespace tessel::passes
