/// The error classes of a measurement, numbered as TVM numbers them (auto_scheduler and
/// AutoTVM agree on 0..8), so that a user who knows "error_no 7" from TVM reads our records
/// the same way. Header-only: the runtime-only measurement worker uses it too.
#pragma once
#include <string>

namespace tessel::tune {

enum class MeasureErrorNo : int {
  NoError = 0,
  InstantiationError = 1,  ///< the schedule could not be replayed or lowered (or lowering crashed)
  CompileHostError = 2,    ///< the host compiler rejected the generated code
  CompileDeviceError = 3,  ///< a device compiler (NVRTC, OpenCL) rejected it; unused on the CPU
  RuntimeDeviceError = 4,  ///< loading or running the kernel failed or crashed the worker
  WrongAnswerError = 5,    ///< the outputs differ from the task's reference
  BuildTimeoutError = 6,   ///< instantiation and compilation ran past the build timeout
  RunTimeoutError = 7,     ///< the run ran past the runner's timeout; the worker was killed
  UnknownError = 8,        ///< anything else (a broken setup, a missing reference)
};

inline constexpr int kMeasureErrorCount = 9;

/// "NoError", "InstantiationError", ... (the enumerator's name).
inline const char* measureErrorName(MeasureErrorNo e) {
  switch (e) {
    case MeasureErrorNo::NoError: return "NoError";
    case MeasureErrorNo::InstantiationError: return "InstantiationError";
    case MeasureErrorNo::CompileHostError: return "CompileHostError";
    case MeasureErrorNo::CompileDeviceError: return "CompileDeviceError";
    case MeasureErrorNo::RuntimeDeviceError: return "RuntimeDeviceError";
    case MeasureErrorNo::WrongAnswerError: return "WrongAnswerError";
    case MeasureErrorNo::BuildTimeoutError: return "BuildTimeoutError";
    case MeasureErrorNo::RunTimeoutError: return "RunTimeoutError";
    case MeasureErrorNo::UnknownError: return "UnknownError";
  }
  return "UnknownError";
}

/// The error for a number read from a record; numbers outside 0..8 become UnknownError.
inline MeasureErrorNo measureErrorFromNumber(int number) {
  return number >= 0 && number < kMeasureErrorCount ? MeasureErrorNo(number) : MeasureErrorNo::UnknownError;
}

}  // namespace tessel::tune
