#include "cli/ReportErrors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <exception>
#include <filesystem>
#include <new>
#include <system_error>

#include "support/Error.h"

namespace tessel::cli {

namespace {

/// "cannot create directories: Not a directory [f]" says the operation and the path but in
/// the library's words; ours name the path first, as every other message does.
std::string describeFilesystemError(const std::filesystem::filesystem_error& e) {
  std::string paths;
  if (!e.path1().empty()) paths = e.path1().string();
  if (!e.path2().empty()) paths += (paths.empty() ? "" : " -> ") + e.path2().string();
  std::string what = e.what();
  // The library's text is "filesystem error: <operation>: <reason> [path]"; keep the middle.
  const std::string prefix = "filesystem error: ";
  if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
  if (size_t bracket = what.find(" ["); bracket != std::string::npos) what = what.substr(0, bracket);
  return paths.empty() ? what : fmt::format("{}: {}", paths, what);
}

}  // namespace

int reportCurrentException() {
  std::string message;
  try {
    throw;
  } catch (const Error& e) {
    message = e.what();
  } catch (const std::filesystem::filesystem_error& e) {
    message = describeFilesystemError(e);
  } catch (const nlohmann::json::exception& e) {
    message = fmt::format("invalid JSON: {}", e.what());
  } catch (const std::bad_alloc&) {
    message = "out of memory";
  } catch (const std::system_error& e) {
    message = fmt::format("system error: {}", e.what());
  } catch (const std::exception& e) {
    message = fmt::format("internal error: {}", e.what());
  } catch (...) {
    message = "internal error: an exception of unknown type";
  }
  fmt::print(stderr, "error: {}\n", message);
  std::fflush(stderr);
  return kExitError;
}

}  // namespace tessel::cli
