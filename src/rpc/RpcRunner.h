/// Measures candidates on remote devices (`--runner rpc --key KEY --tracker HOST:PORT`): the
/// tune::Runner that leases devices of a key from the tracker and spreads a batch over all
/// of them that are free, one thread per device, each taking the next candidate as soon as its
/// device is done with the last. Each candidate's library is uploaded to the device's session
/// and measured there by the server's isolated worker, with the timing options of a local run.
///
/// A device lost mid-measurement (the server died, hung past the deadline, or the network went)
/// returns its candidate to the queue for another device, up to max_attempts in all, after
/// which the candidate ends in a RuntimeDeviceError naming the devices lost. Costs a device
/// cannot have measured (under the floor, or over its reported peak: tune/PlausibleCost.h) end
/// in a RuntimeDeviceError too, so a rogue or broken device never ranks a candidate first. A tracker that is
/// unreachable (restarting) is waited for, up to the device wait. A GPU candidate (a module
/// directory) goes up as its manifest and code, for a server measuring on a GPU of its kind. Every candidate ends in
/// exactly one result, in input order.
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rpc/Security.h"
#include "support/TempDir.h"
#include "tune/MeasureOptions.h"
#include "tune/MeasureBatch.h"

namespace tessel::rpc {

struct RpcRunnerOptions {
  std::string tracker = "127.0.0.1:9190";  ///< host:port
  std::string key;                         ///< the device key
  int priority = 1;                        ///< of the requests for devices
  double deviceWaitSeconds = 60;           ///< how long to wait for a device before failing candidates
  double leaseSeconds = 60;                ///< lease duration (renewed between candidates)
  int maxDevices = 0;                      ///< devices used at once (0: all of the key)
  int maxAttempts = 3;                     ///< measurements of a candidate whose devices are lost, in all
  /// number, repeat, min_repeat_ms, timeout, cooldown, cache flush, check_correctness,
  /// tolerance, seed: as for a local run (workerPath is the server's business).
  tune::MeasureOptions measure;
  RpcSecurity security;
  std::string clientName = "tessel-tune";
};

class RpcRunner : public tune::Runner {
 public:
  /// Throws Error for invalid options (checked before anything is measured).
  explicit RpcRunner(RpcRunnerOptions options);
  ~RpcRunner() override;

  std::vector<tune::MeasureResult> run(const std::vector<tune::MeasureInput>& inputs,
                                       const std::vector<tune::BuildResult>& builds) override;
  bool needsReference(const tune::MeasureTask& task) const override;
  void setReference(const tune::MeasureTask& task, const tune::BuildResult& reference) override;

  /// Asks the tracker whether it has a device of the key (free or not), for at most 3 seconds
  /// (servers started just before the tuner have that long to register); throws Error naming
  /// the key, the tracker and the keys it does have, or why the tracker cannot be asked. Commands call it before any work (TVM's RPCRunner checks the same).
  /// Returns how many devices of the key there are.
  int checkDevicesRegistered() const;

  const RpcRunnerOptions& options() const { return options_; }
  /// Candidates measured per device address (results from a device, errors included).
  std::map<std::string, int64_t> measuredPerDevice() const;
  /// How many times a device was lost with a candidate on it.
  int64_t devicesLost() const;

 private:
  struct Batch;
  void deviceLoop(Batch& batch);

  RpcRunnerOptions options_;
  TempDir dir_;
  std::map<std::string, tune::BuildResult> references_;  ///< by task key; libraries copied into dir_
  mutable std::mutex statsMutex_;
  std::map<std::string, int64_t> measuredPerDevice_;
  int64_t devicesLost_ = 0;
  int64_t batches_ = 0;
};

}  // namespace tessel::rpc
