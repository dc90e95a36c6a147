/// The headers most of the libraries' translation units parse: {fmt}, nlohmann::json and the
/// standard library's containers and utilities. src/CMakeLists.txt precompiles this file once
/// per set of language options and every library reuses it, instead of each unity batch parsing
/// them again (about 3 CPU-s per batch with g++ -O2 or clang -O1 with the sanitizers). Only
/// headers whose meaning does not depend on what a library defines belong here; a build with
/// TESSEL_PCH=OFF checks that every file includes what it uses.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
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
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
