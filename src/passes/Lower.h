/// The lowering driver: a scheduled State becomes an optimized loop-IR function, one pass a
/// line, in order. This file is the table of contents of lowering.
#pragma once
#include <string>

#include "schedule/LoopNest.h"

namespace tessel::passes {

using LoweredFunction = schedule::LoopNestFunction;

LoweredFunction lower(const schedule::State& state, const std::string& name);

}  // namespace tessel::passes
