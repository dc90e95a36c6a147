/// One-off calls on a device of a key, through the tracker: lease one, open a session, ask, give
/// it back. Its hardware parameters (`tessel query --hardware KEY`; the seeds read
/// `remote.cpu(0)`'s parameters the same way before choosing schedules), and the timing of a
/// whole compiled module on it (`tessel benchmark DIR --runner rpc`, the seeds' upload,
/// load_module and time_evaluator("run")).
#pragma once
#include <chrono>
#include <string>

#include "rpc/HardwareInfo.h"
#include "rpc/Security.h"
#include "runtime/TimeEvaluator.h"

namespace tessel::rpc {

/// The parameters of a free device of `key` (waiting up to `wait` for one) and its address in
/// *address when given. Throws Error when none is free in time or the tracker cannot be asked.
HardwareInfo queryRemoteHardware(const std::string& tracker, const std::string& key, const RpcSecurity& security,
                                 std::chrono::milliseconds wait, std::string* address = nullptr);

/// Uploads the module directory's graph.json, kernels.so and params.bin to a free device of
/// `key` and times run() there (inputs zeroed) with `timing`'s number, repeat and
/// min_repeat_ms, in the server's isolated worker. Throws Error when no device is free in
/// time, the upload is refused, or the module fails on the device (with the device's message).
runtime::TimingResult benchmarkRemoteModule(const std::string& tracker, const std::string& key,
                                            const RpcSecurity& security, const std::string& directory,
                                            const runtime::TimeEvaluatorOptions& timing, double timeoutSeconds,
                                            std::chrono::milliseconds wait, std::string* address = nullptr);

}  // namespace tessel::rpc
