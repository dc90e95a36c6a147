/// oneDNN limited to the instruction set of the target tessel compiles for, so that a figure
/// against oneDNN compares like with like: measuring AVX2 code on an AVX-512 host means oneDNN
/// on AVX2 too (as ONEDNN_MAX_CPU_ISA=AVX2 would). Must run before any oneDNN primitive is made.
#pragma once
#include <string>

#include "target/Target.h"

namespace tessel::bench {

/// Limits oneDNN to the target's ISA class unless the target runs on this machine with all of
/// its features (then oneDNN takes what it finds) or ONEDNN_MAX_CPU_ISA is set (the user's
/// choice wins). Returns a line saying what oneDNN runs with, for the bench's header.
std::string limitOneDnnToTarget(const target::Target& target);

}  // namespace tessel::bench
