/// Where `compile -o` and `tune -o` put a module: a directory written whole. The module is built
/// in a staging directory beside the output and put in its place only when it is complete, so a
/// failed build (a full disk, a compiler error, Ctrl-C) leaves the old module as it was and
/// nothing half-made. An existing module (a directory with a plan, graph.json) is replaced
/// without --force, as a compiler replaces its -o file; a directory that holds anything else may
/// be the user's own and is refused.
#pragma once
#include <functional>
#include <string>

namespace tessel::driver {

/// Checks before any work that `path` may take a module: a new path, an empty directory or a
/// module. Errors start with "--output PATH".
void checkModuleOutput(const std::string& path);

/// Runs `build` on a new staging directory beside `path` and, when it returns, puts that
/// directory in place of `path` (AtomicDirectory). When `build` throws, the staging directory is
/// removed and `path` is unchanged.
void writeModule(const std::string& path, const std::function<void(const std::string& directory)>& build);

}  // namespace tessel::driver
