#include "rpc/Validate.h"

#include <fmt/format.h>

#include <cctype>

namespace tessel::rpc {

grpc::Status invalid(const std::string& field, const std::string& problem) {
  return {grpc::INVALID_ARGUMENT, fmt::format("malformed request: '{}' {}", field, problem)};
}

grpc::Status validKey(const std::string& key, const std::string& field) {
  if (key.empty()) return invalid(field, "is empty");
  if (key.size() > 128) return invalid(field, "is longer than 128 characters");
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return invalid(field, fmt::format("'{}' may hold only letters, digits, '.', '_' and '-'", key));
  return grpc::Status::OK;
}

grpc::Status validAddress(const std::string& address, const std::string& field) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return invalid(field, fmt::format("'{}' is not host:port", address));
  std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) < 1 || std::stoi(port) > 65535)
    return invalid(field, fmt::format("'{}' has no valid port (1..65535)", address));
  return grpc::Status::OK;
}

grpc::Status validFileName(const std::string& name, const std::string& field) {
  if (name.empty()) return invalid(field, "is empty");
  if (name.size() > 255) return invalid(field, "is longer than 255 bytes");
  if (name == "." || name == "..") return invalid(field, fmt::format("'{}' is not a file name", name));
  for (char c : name) {
    if (c == '/' || c == '\\')
      return invalid(field, fmt::format("'{}' is a path: uploads are plain file names inside the session's directory",
                                        name));
    if (static_cast<unsigned char>(c) < 0x20) return invalid(field, "contains a control character");
  }
  return grpc::Status::OK;
}

}  // namespace tessel::rpc
