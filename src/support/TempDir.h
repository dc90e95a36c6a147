/// A uniquely named temporary directory, removed with its contents when the owner goes away
/// (unless asked to keep it, so that a failing build can be inspected).
#pragma once
#include <string>

namespace tessel {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "tessel");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

/// Reads a whole file; throws Error naming the path when it cannot.
std::string readFile(const std::string& path);
/// Writes a whole file (replacing it); throws Error naming the path when it cannot.
void writeFile(const std::string& path, const std::string& contents);

}  // namespace tessel
