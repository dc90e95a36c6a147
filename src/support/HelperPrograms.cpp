#include "support/HelperPrograms.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace tessel {

extern const char* const kBuildTreeDirectory;  ///< src/CMakeLists.txt writes it

namespace fs = std::filesystem;

namespace {

std::mutex programDirectoryMutex;
std::string programDirectorySet;

bool isExecutableFile(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

/// Whether `path` names something inside `directory` (both made absolute and resolved).
bool isInside(const std::string& path, const std::string& directory) {
  if (path.empty() || directory.empty()) return false;
  std::error_code ec;
  fs::path file = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return false;
  fs::path root = fs::weakly_canonical(directory, ec);
  if (ec) return false;
  auto [rootEnd, fileAt] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  return rootEnd == root.end() && fileAt != file.end();
}

/// The file this code was loaded from: the executable, or the shared object it is linked into.
/// dladdr names the main program by its argv[0], which may be relative to a directory left
/// since; only an absolute name is taken.
std::string fileHoldingThisCode() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&fileHoldingThisCode), &info) && info.dli_fname && info.dli_fname[0] == '/')
    return info.dli_fname;
  return {};
}

}  // namespace

std::string executableDirectory() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

bool runningFromBuildTree() {
  const std::string buildTree = kBuildTreeDirectory;
  std::error_code ec;
  return isInside(fs::read_symlink("/proc/self/exe", ec).string(), buildTree) || isInside(fileHoldingThisCode(), buildTree);
}

void setProgramDirectory(std::string directory) {
  std::lock_guard lock(programDirectoryMutex);
  programDirectorySet = std::move(directory);
}

std::optional<std::string> findHelperProgram(const HelperProgram& program, std::vector<std::string>& tried) {
  if (const char* chosen = std::getenv(program.environmentVariable.c_str()); chosen && *chosen) {
    if (isExecutableFile(chosen)) return chosen;
    tried.push_back(fmt::format("${}={}", program.environmentVariable, chosen));
  }
  std::vector<std::string> directories{executableDirectory()};
  {
    std::lock_guard lock(programDirectoryMutex);
    directories.push_back(programDirectorySet);
  }
  for (const std::string& directory : directories) {
    if (directory.empty()) continue;
    std::string candidate = (fs::path(directory) / program.name).string();
    if (isExecutableFile(candidate)) return candidate;
    tried.push_back(candidate);
  }
  if (!program.builtPath.empty() && runningFromBuildTree()) {
    if (isExecutableFile(program.builtPath)) return program.builtPath;
    tried.push_back(program.builtPath);
  }
  return std::nullopt;
}

}  // namespace tessel
