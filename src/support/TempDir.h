/// A uniquely named temporary directory, removed with its contents when the owner goes away
/// (unless asked to keep it, so that a failing build can be inspected), and when SIGINT or
/// SIGTERM ends the process (SignalCleanup.h).
#pragma once
#include <string>

#include "support/SignalCleanup.h"

namespace tessel {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "tessel");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void keep() {
    keep_ = true;
    cleanup_ = {};
  }

 private:
  std::string path_;
  bool keep_ = false;
  CleanupOnSignal cleanup_;
};

}  // namespace tessel
