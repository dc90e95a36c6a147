#include "codegen/Toolchain.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

namespace tessel::codegen {

namespace {

SubprocessResult runTool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, const std::string& what) {
  try {
    SubprocessOptions run;
    run.timeout = timeout;
    return runSubprocess(argv, run);
  } catch (const Error& e) {
    throw e.withContext(what);
  }
}

std::string firstLine(const std::string& text) {
  auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

/// For a GCC driver: its linker and the OpenMP runtime it links, asked once per compiler.
/// Linking with `ld` directly against libgomp alone takes 10 ms where the driver's full link
/// (crt files, libc's linker script, libm) takes 45: a quarter of a small kernel's build. The
/// C library and libm need no DT_NEEDED entry: every process that loads tessel kernels has
/// them loaded already (the runtime is C++), and dlopen resolves against them.
struct DirectLink {
  std::string linker, openmp;
  /// The compiler's own support library (libgcc.a), when it has one: the helpers the compiler
  /// calls instead of emitting code (aarch64's atomics, __aarch64_cas8_acq_rel and the like,
  /// which the gcc driver would link and a bare `ld -shared` does not).
  std::string support;
  bool usable = false;
};

/// The queries run within the build's `timeout` (0: none): a compiler that hangs on them is a
/// build timeout like one that hangs compiling, and the answer is not kept then (the next
/// build asks again) — a hung query would otherwise hold every build behind this lock.
DirectLink directLinkFor(const std::string& compiler, std::chrono::milliseconds timeout) {
  static std::mutex mutex;
  static std::map<std::string, DirectLink> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(compiler);
  if (it != cache.end()) return it->second;
  DirectLink link;
  bool gcc = compiler.find("gcc") != std::string::npos || compiler.find("g++") != std::string::npos;
  if (gcc) {
    SubprocessOptions query;
    auto start = std::chrono::steady_clock::now();
    bool hung = false;
    auto ask = [&](const std::string& option) {
      auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      if (timeout.count() > 0) query.timeout = std::max(std::chrono::milliseconds(1), timeout - spent);
      auto r = runSubprocess({compiler, option}, query);
      hung = hung || r.timedOut;
      return r;
    };
    try {
      auto ld = ask("-print-prog-name=ld");
      auto gomp = ask("-print-file-name=libgomp.so");
      link.linker = firstLine(ld.output);
      link.openmp = firstLine(gomp.output);
      // -print-file-name echoes the bare name when it finds nothing.
      link.usable = ld.ok() && gomp.ok() && !link.linker.empty() && link.openmp.find('/') != std::string::npos &&
                    std::filesystem::exists(link.openmp);
      auto support = ask("-print-libgcc-file-name");
      if (support.ok() && std::filesystem::exists(firstLine(support.output))) link.support = firstLine(support.output);
    } catch (const Error&) {
      link.usable = false;
    }
    if (hung)
      fail("timed out after {} ms: the compiler '{}' did not answer its queries (-print-prog-name and the like)", timeout.count(),
           compiler);
  }
  return cache.emplace(compiler, link).first->second;
}

[[noreturn]] void toolFailed(const char* tool, const std::string& sourcePath, const SubprocessResult& r) {
  std::string message = r.output.size() > 4000 ? r.output.substr(0, 4000) + "\n..." : r.output;
  fail("{} failed on {} ({}):\n{}", tool, sourcePath, r.describe(), message);
}

/// -mtriple=T: Debian's cross compiler T-gcc (gcc-aarch64-linux-gnu for aarch64-linux-gnu) and
/// the architecture's baseline instead of -march=native. The host's own triple changes nothing.
void applyTriple(const std::string& triple, const std::string& target, CompileOptions& options) {
  TESSEL_CHECK(!triple.empty() && triple.find_first_of(" /") == std::string::npos,
               "target '{}': -mtriple needs a triple such as aarch64-linux-gnu", target);
#if defined(__x86_64__)
  if (triple == "x86_64-linux-gnu") return;
#elif defined(__aarch64__)
  if (triple == "aarch64-linux-gnu") return;
#endif
  options.compiler = triple + "-gcc";
  if (triple.rfind("aarch64", 0) == 0) options.flags[1] = "-march=armv8-a";
  else if (triple.rfind("x86_64", 0) == 0) options.flags[1] = "-march=x86-64-v2";
  else if (triple.rfind("arm", 0) == 0) options.flags[1] = "-march=armv7-a";
  else fail("target '{}': -mtriple={} names an architecture tessel cannot cross-compile for (aarch64, arm, x86_64)", target, triple);
}

}  // namespace

void compileSharedLibrary(const std::string& source, const std::string& outputPath, const CompileOptions& options,
                          CompileTimes* times) {
  std::string sourcePath = outputPath + ".cpp";
  writeFile(sourcePath, source);
  std::vector<std::string> argv = {options.compiler, "-x", "c++", "-std=gnu++17", "-fPIC", "-pipe",
                                   "-fopenmp", "-fno-math-errno", "-w"};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  DirectLink link;
  try {
    link = directLinkFor(options.compiler, options.timeout);
  } catch (const Error& e) {
    throw e.withContext("compiling " + sourcePath);
  }
  if (!link.usable) {
    argv.insert(argv.end(), {"-shared", "-o", outputPath, sourcePath, "-lm"});
    auto r = runTool(argv, options.timeout, "compiling " + sourcePath);
    if (times) times->compileSeconds = r.seconds;
    if (!r.ok()) toolFailed("the C++ compiler", sourcePath, r);
    return;
  }
  std::string objectPath = outputPath + ".o";
  argv.insert(argv.end(), {"-c", "-o", objectPath, sourcePath});
  auto compiled = runTool(argv, options.timeout, "compiling " + sourcePath);
  if (times) times->compileSeconds = compiled.seconds;
  if (!compiled.ok()) toolFailed("the C++ compiler", sourcePath, compiled);
  std::vector<std::string> linkArgv = {link.linker, "-shared", "-o", outputPath, objectPath, link.openmp};
  if (!link.support.empty()) linkArgv.push_back(link.support);
  auto linked = runTool(linkArgv, options.timeout, "linking " + objectPath);
  if (times) times->linkSeconds = linked.seconds;
  std::error_code ignored;
  std::filesystem::remove(objectPath, ignored);
  if (!linked.ok()) toolFailed("the linker", sourcePath, linked);
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
      applyTriple(word.substr(9), target, options);
    } else if (word.rfind("-num-cores=", 0) == 0) {
      targetCores(target);  // checked here too: a build with a bad value fails before any work
    } else {
      fail("target '{}': unknown option '{}' (known: -mcpu=, -mattr=, -mtriple=, -opt-level=, -cc=, -num-cores=)", target,
           word);
    }
  }
  return options;
}

int targetCores(const std::string& target) {
  std::istringstream words(target);
  std::string word;
  int cores = 0;
  while (words >> word) {
    if (word.rfind("-num-cores=", 0) != 0) continue;
    std::string value = word.substr(11);
    bool digits = !value.empty() && value.size() <= 4 && value.find_first_not_of("0123456789") == std::string::npos;
    TESSEL_CHECK(digits && std::stoi(value) >= 1, "target '{}': -num-cores must be a number of cores from 1 to 9999, got '{}'",
                 target, value);
    cores = std::stoi(value);
  }
  return cores;
}

std::string cpuClass(const CompileOptions& options) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::string> cache;
  std::vector<std::string> argv = {options.compiler};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  argv.insert(argv.end(), {"-dM", "-E", "-x", "c", "/dev/null"});
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(argv);
  if (it != cache.end()) return it->second;
  std::string cls;
  try {
    SubprocessOptions run;
    run.timeout = options.timeout;
    SubprocessResult r = runSubprocess(argv, run);
    auto defines = [&](const char* macro) { return r.output.find(std::string("#define ") + macro + " ") != std::string::npos; };
    if (!r.ok()) cls = "";
    else if (defines("__x86_64__")) cls = defines("__AVX512F__") ? "x86_64-avx512" : defines("__AVX2__") ? "x86_64-avx2" : "x86_64";
    else if (defines("__aarch64__")) cls = "aarch64";
    else if (defines("__arm__")) cls = "arm";
  } catch (const Error&) {
    cls = "";  // no such compiler: the build says so where it needs one
  }
  return cache.emplace(std::move(argv), cls).first->second;
}

}  // namespace tessel::codegen
