/// The headers nearly every test parses: GoogleTest, nlohmann::json, {fmt} and the standard
/// library's containers and utilities. tests/CMakeLists.txt precompiles this file once and every
/// test executable reuses it, which saves each test's translation units the two seconds of
/// parsing them again (about a tenth of the test build). Only headers whose meaning does not
/// depend on what a test defines belong here.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
