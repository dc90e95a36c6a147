/// Sets (or unsets) an environment variable for a test's scope and puts back what was there
/// before (the value, or no variable), so that a failing assertion does not leak the setting
/// into the next test of the executable.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>

namespace tessel::testsupport {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  /// Unsets the variable for the scope.
  ScopedEnv(const char* name, std::nullopt_t) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old;
    ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (previous_) ::setenv(name_, previous_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> previous_;
};

}  // namespace tessel::testsupport
