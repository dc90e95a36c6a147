/// `tessel classify MODULE IMAGE`: the image decoded, resized to the module's input and
/// normalized, the module run once, and the top classes printed with their names (the 1000
/// ImageNet classes that ship with tessel, or --labels FILE) and probabilities, as seed 004
/// ends.
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void addClassifyCommand(CLI::App& app);

}  // namespace tessel::cli
