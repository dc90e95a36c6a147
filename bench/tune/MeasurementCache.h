/// A Builder and Runner pair for the tuning benchmark that wraps the real LocalBuilder and
/// LocalRunner and does two things on the way through:
///   - it times the two halves (wall seconds spent in build() and in run()), so the benchmark
///     can say where a trial's time goes: building, running, or the tuner itself (whatever
///     of the tuning loop's wall time is in neither);
///   - optionally, it measures each candidate (task + config) once per run and answers a
///     repeated candidate from memory. The search-efficiency part runs 3 tuners x 3 seeds over
///     the same few tasks; tuners that converge propose the same configs again, and measuring
///     those again would only add noise and minutes. With sharing, every tuner is scored on
///     one measured landscape.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tune/MeasureBatch.h"

namespace tessel::bench {

class MeasurementCache {
 public:
  /// `share`: answer repeated candidates from memory (false: every trial is measured).
  MeasurementCache(tune::Builder& builder, tune::Runner& runner, bool share);

  /// The halves to hand to the tuning loop (tune::autotvm::tuneTask).
  tune::Builder& builder() { return builderSide_; }
  tune::Runner& runner() { return runnerSide_; }

  /// Whether this candidate's result came from memory (valid inside a trial callback).
  bool wasShared(const tune::MeasureInput& input) const;

  /// Counters since construction (or the last resetCounters()).
  struct Counters {
    double buildSeconds = 0;  ///< wall time inside the real builder
    double runSeconds = 0;    ///< wall time inside the real runner
    int64_t measured = 0;     ///< candidates really built and run
    int64_t shared = 0;       ///< candidates answered from memory
  };
  const Counters& counters() const { return counters_; }
  void resetCounters() { counters_ = {}; }

 private:
  static std::string keyOf(const tune::MeasureInput& input);

  class BuilderSide : public tune::Builder {
   public:
    explicit BuilderSide(MeasurementCache& cache) : cache_(cache) {}
    std::vector<tune::BuildResult> build(const std::vector<tune::MeasureInput>& inputs) override;
    void discard(const tune::BuildResult& result) override;

   private:
    MeasurementCache& cache_;
  };
  class RunnerSide : public tune::Runner {
   public:
    explicit RunnerSide(MeasurementCache& cache) : cache_(cache) {}
    std::vector<tune::MeasureResult> run(const std::vector<tune::MeasureInput>& inputs,
                                         const std::vector<tune::BuildResult>& builds) override;
    bool needsReference(const tune::MeasureTask& task) const override;
    void setReference(const tune::MeasureTask& task, const tune::BuildResult& reference) override;

   private:
    MeasurementCache& cache_;
  };

  tune::Builder& innerBuilder_;
  tune::Runner& innerRunner_;
  bool share_;
  BuilderSide builderSide_{*this};
  RunnerSide runnerSide_{*this};
  std::map<std::string, tune::MeasureResult> results_;  ///< by keyOf(), when sharing
  std::map<std::string, bool> sharedNow_;               ///< the last batch: answered from memory?
  Counters counters_;
};

}  // namespace tessel::bench
