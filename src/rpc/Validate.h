/// Checks of request fields shared by the tracker and the device server (internal): each
/// failure is an INVALID_ARGUMENT status naming the field and what is wrong with it.
#pragma once
#include <grpcpp/grpcpp.h>

#include <string>

namespace tessel::rpc {

grpc::Status invalid(const std::string& field, const std::string& problem);
/// A device key: 1..128 characters of letters, digits, '.', '_', '-'.
grpc::Status validKey(const std::string& key, const std::string& field);
/// host:port with a port in 1..65535.
grpc::Status validAddress(const std::string& address, const std::string& field);
/// A plain file name for a session's directory: no '/', not "." or "..", no NUL or control
/// characters, at most 255 bytes.
grpc::Status validFileName(const std::string& name, const std::string& field);

}  // namespace tessel::rpc
