#include "codegen/Toolchain.h"

#include <sstream>

#include "support/Error.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

namespace tessel::codegen {

void compileSharedLibrary(const std::string& source, const std::string& outputPath, const CompileOptions& options) {
  std::string sourcePath = outputPath + ".cpp";
  writeFile(sourcePath, source);
  std::vector<std::string> argv = {options.compiler, "-x", "c++", "-std=gnu++17", "-shared", "-fPIC", "-pipe",
                                   "-fopenmp", "-fno-math-errno", "-w"};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  argv.insert(argv.end(), {"-o", outputPath, sourcePath, "-lm"});
  SubprocessResult r;
  try {
    SubprocessOptions run;
    run.timeout = options.timeout;
    r = runSubprocess(argv, run);
  } catch (const Error& e) {
    throw e.withContext("compiling " + sourcePath);
  }
  if (!r.ok()) {
    std::string message = r.output.size() > 4000 ? r.output.substr(0, 4000) + "\n..." : r.output;
    fail("the C++ compiler failed on {} ({}):\n{}", sourcePath, r.describe(), message);
  }
}

CompileOptions compileOptionsForTarget(const std::string& target) {
  CompileOptions options;
  std::istringstream words(target);
  std::string word;
  words >> word;  // the target kind
  TESSEL_CHECK(word == "cpu" || word == "llvm" || word == "c", "target '{}' is not a CPU target", target);
  while (words >> word) {
    if (word.rfind("-mcpu=", 0) == 0) {
      options.flags[1] = "-march=" + word.substr(6);
    } else if (word.rfind("-mattr=", 0) == 0) {
      std::istringstream attrs(word.substr(7));
      std::string a;
      while (std::getline(attrs, a, ',')) {
        TESSEL_CHECK(a.size() > 1 && (a[0] == '+' || a[0] == '-'), "target '{}': attribute '{}' must start with + or -", target, a);
        options.flags.push_back((a[0] == '+' ? "-m" : "-mno-") + a.substr(1));
      }
    } else if (word.rfind("-opt-level=", 0) == 0) {
      std::string level = word.substr(11);
      TESSEL_CHECK(level.size() == 1 && level[0] >= '0' && level[0] <= '3', "target '{}': -opt-level must be 0, 1, 2 or 3", target);
      options.flags[0] = "-O" + level;
    } else if (word.rfind("-cc=", 0) == 0) {
      options.compiler = word.substr(4);
    } else if (word.rfind("-mtriple=", 0) == 0) {
      fail("target '{}': cross compilation (-mtriple) is not supported yet", target);
    } else {
      fail("target '{}': unknown option '{}' (known: -mcpu=, -mattr=, -opt-level=, -cc=)", target, word);
    }
  }
  return options;
}

}  // namespace tessel::codegen
