/// A compiled module as the Python package holds it (what TVM's relay.build returns, and
/// tvm.runtime.load_module): a module directory, with the temporary directory it was built
/// in when tessel.build made it (removed when the last Python reference goes away), and the
/// lines the build said about what it applied.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "support/TempDir.h"

namespace tessel::python {

struct Module {
  std::string directory;
  std::shared_ptr<TempDir> scratch;  ///< set when built into a temporary directory
  std::vector<std::string> lines;    ///< driver::BuildNetworkResult's lines and warnings
  int functions = 0, distinctKernels = 0;
};

}  // namespace tessel::python
