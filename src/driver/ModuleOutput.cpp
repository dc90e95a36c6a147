#include "driver/ModuleOutput.h"

#include "runtime/GraphExecutor.h"
#include "support/AtomicFile.h"
#include "support/Files.h"

namespace tessel::driver {

void checkModuleOutput(const std::string& path) { checkOutputDirectory(path, runtime::kGraphPlanFile, "--output"); }

void writeModule(const std::string& path, const std::function<void(const std::string& directory)>& build) {
  checkModuleOutput(path);
  AtomicDirectory module(path);
  build(module.staging());
  module.commit();
}

}  // namespace tessel::driver
