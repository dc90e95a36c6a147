/// Where tessel finds the programs it starts (tessel-measure-worker, tessel-device-worker,
/// tessel-vta-worker) and the files it runs (the drawing code of `tessel records plot`): one
/// lookup, so that the build tree, an installed prefix (moved or not) and the Python package
/// inside python3 find them the same way, and an installed copy never reaches into the build tree
/// it was made from (which may be gone, or hold another version).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// A program to look for.
struct HelperProgram {
  std::string name;                 ///< its file name: "tessel-measure-worker"
  std::string environmentVariable;  ///< a variable naming its path, which wins over every place
  std::string builtPath;            ///< the build tree's copy (compiled in; empty: none)
};

/// The path of `program`: $environmentVariable when it names an executable, else the program
/// beside the running executable (an installed `tessel` and its workers share PREFIX/bin), else in
/// the directory setProgramDirectory named, else the build tree's copy when runningFromBuildTree().
/// nullopt when none is an executable file; each place looked at is added to `tried`, for the
/// caller's message.
std::optional<std::string> findHelperProgram(const HelperProgram& program, std::vector<std::string>& tried);

/// Where the programs of an installed tessel are, for code that runs inside a program of another
/// project (the Python extension inside python3, whose own directory holds no tessel program).
void setProgramDirectory(std::string directory);

/// Whether this code runs from the build tree it was compiled in: the running executable, or the
/// shared object that holds this code (the Python extension), lies inside it. Only then may a
/// path into the build tree be used.
bool runningFromBuildTree();

/// The directory of the running executable (from /proc/self/exe); empty if unknown.
std::string executableDirectory();

}  // namespace tessel
