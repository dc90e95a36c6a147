/// Test support for bad-input tests: the message of the tessel::Error a call throws, and a
/// check that a message names what it should.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "support/Error.h"

namespace tessel::testsupport {

/// The message of the Error `body` throws, or "(no error)".
template <class Body>
std::string errorOf(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

inline void expectContains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

}  // namespace tessel::testsupport
