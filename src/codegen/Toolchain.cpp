#include "codegen/Toolchain.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "support/Error.h"
#include "support/Files.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "target/CpuRequirements.h"
#include "target/HostCpu.h"
#include "target/KnownCpus.h"

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

}  // namespace

void compileSharedLibrary(const std::string& source, const std::string& output, const CompileOptions& options,
                          CompileTimes* times) {
  // Absolute paths on the tools' command lines: a directory named "-weird" is not an option.
  const std::string outputPath = std::filesystem::absolute(output).lexically_normal().string();
  std::string sourcePath = outputPath + ".cpp";
  // The library's directory is the caller's: a module's, synced when it is complete, or a
  // temporary one.
  writeFile(sourcePath, source, SyncToDisk::kNo);
  std::vector<std::string> argv = {options.compiler, "-x", "c++", "-std=gnu++17", "-fPIC", "-pipe",
                                   "-fopenmp", "-fno-math-errno", "-w"};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  if (!options.moduleRequires.empty()) argv.push_back("-DTESSEL_MODULE_REQUIRES=\"" + options.moduleRequires + "\"");
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

CompileOptions compileOptionsForTarget(const target::Target& target) {
  TESSEL_CHECK(target.isCpu(), "target '{}' is not a CPU target", target.str());
  CompileOptions options;
  const target::CpuMachine& cpu = target.cpu;
  bool x86 = cpu.arch == "x86_64";
  if (!target.runsOnHost()) {
    // Not this machine: the named CPU, or the architecture's baseline.
    std::string name = target.mcpu.empty() || target.mcpu == "native" ? target::baselineCpuName(cpu.arch) : target.mcpu;
    bool architecture = name.rfind("armv", 0) == 0 || name.rfind("x86-64", 0) == 0;
    options.flags[1] = (x86 || architecture ? "-march=" : "-mcpu=") + name;
    // Debian's cross compiler for a foreign triple (the host's own triple changes nothing).
    if (!target.mtriple.empty() && cpu.arch != target::hostArch()) options.compiler = target.mtriple + "-gcc";
  }
  options.flags[0] = "-O" + std::to_string(target.optLevel);
  for (const auto& attr : target.mattr) options.flags.push_back((attr[0] == '+' ? "-m" : "-mno-") + attr.substr(1));
  if (!target.cc.empty()) options.compiler = target.cc;
  options.moduleRequires = target::CpuRequirements::of(cpu).text();
  return options;
}

}  // namespace tessel::codegen
