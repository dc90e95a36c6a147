#include "graph/MemoryPlan.h"

#include <algorithm>
#include <numeric>

namespace tessel::graph {

size_t MemoryPlan::plannedBytes() const { return std::accumulate(storageBytes.begin(), storageBytes.end(), size_t(0)); }

MemoryPlan planMemory(const std::vector<PlannedTensor>& tensors) {
  MemoryPlan plan;
  plan.storageOf.assign(tensors.size(), -1);
  // Tensors in order of their first write; a buffer is free once its last reader has run.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].firstCall < tensors[b].firstCall; });
  std::vector<int> busyUntil;  // per buffer: the last call reading its current tensor
  for (size_t t : order) {
    const PlannedTensor& p = tensors[t];
    plan.naiveBytes += p.bytes;
    int best = -1, largest = -1;
    for (size_t s = 0; s < plan.storageBytes.size(); ++s) {
      // Free when its tensor's last reader runs strictly before this tensor is written.
      if (busyUntil[s] >= p.firstCall) continue;
      if (plan.storageBytes[s] >= p.bytes && (best < 0 || plan.storageBytes[s] < plan.storageBytes[size_t(best)])) best = int(s);
      if (largest < 0 || plan.storageBytes[s] > plan.storageBytes[size_t(largest)]) largest = int(s);
    }
    int chosen = best >= 0 ? best : largest;
    if (chosen < 0) {
      chosen = int(plan.storageBytes.size());
      plan.storageBytes.push_back(0);
      busyUntil.push_back(0);
    }
    plan.storageBytes[size_t(chosen)] = std::max(plan.storageBytes[size_t(chosen)], p.bytes);
    busyUntil[size_t(chosen)] = p.lastCall;
    plan.storageOf[t] = chosen;
  }
  return plan;
}

}  // namespace tessel::graph
