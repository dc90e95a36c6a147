// The records shipped with tessel (records/ in the repository, embedded at build time): every log
// parses, every record is a valid trial that carries its DAG, each workload has one record (the
// VTA log: up to 16 distinct configs per task), and
// every CPU and CUDA record replays and lowers on its DAG (a CUDA one within sm_90's limits), so a change of the schedule language that
// breaks a shipped record fails here rather than in a user's build; and every CUDA template record
// is what its config instantiates today, so a rule or tile change that leaves one behind does too.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "passes/GpuLimits.h"
#include "passes/Lower.h"
#include "schedule/Steps.h"
#include "te/DagJson.h"
#include "tune/RecordQueries.h"
#include "tune/ShippedRecords.h"
#include "tune/autotvm/GpuTemplates.h"

using namespace tessel;

namespace {

TEST(ShippedRecords, TheLogsTesselShips) {
  auto sets = tune::shippedRecordSets();
  EXPECT_EQ(sets, (std::vector<std::string>{"cpu/x86_64-avx2", "cpu/x86_64-avx2-zen", "cpu/x86_64-avx512", "cuda/sm_90",
                                            "vta/sim_1x16_i8w8a32_15_15_18_17"}));
  EXPECT_TRUE(tune::shippedRecords("cpu/no-such-class").empty());
  EXPECT_EQ(tune::shippedRecordSetForCpu(target::Target::parse("cpu -mcpu=skylake-avx512")), "cpu/x86_64-avx512");
  EXPECT_EQ(tune::shippedRecordSetForCpu(target::Target::parse("cpu -mcpu=haswell")), "cpu/x86_64-avx2");
  // A Zen tuning's AVX2 tiles differ (CpuMachine::recordFamily): the haswell log does not serve it.
  EXPECT_EQ(tune::shippedRecordSetForCpu(target::Target::parse("cpu -mcpu=znver3")), "cpu/x86_64-avx2-zen");
  EXPECT_EQ(tune::shippedRecordSetForCpu(target::Target::parse("cpu -mcpu=znver4")), "cpu/x86_64-avx512");
  EXPECT_EQ(tune::shippedRecordSetForGpu(target::Target::parse("cuda")), "cuda/sm_90");
  EXPECT_EQ(tune::shippedRecordSetForGpu(target::Target::parse("cuda -arch=sm_90")), "cuda/sm_90");
  EXPECT_EQ(tune::shippedRecordSetForGpu(target::Target::parse("opencl -device=mali")), "");
}

TEST(ShippedRecords, EveryRecordIsValidUniqueAndReplaysOnItsDag) {
  for (const std::string& set : tune::shippedRecordSets()) {
    auto records = tune::shippedRecords(set);
    EXPECT_FALSE(records.empty()) << set;
    std::string kind = set.substr(0, set.find('/'));
    std::map<std::pair<std::string, std::string>, int> perWorkload;  // by target and workload
    std::set<std::tuple<std::string, std::string, int64_t>> configs;
    for (const tune::TuningRecord& r : records) {
      SCOPED_TRACE(set + ": " + r.task.name + " (" + r.task.workloadKey + ")");
      EXPECT_TRUE(r.ok());
      EXPECT_EQ(r.target.substr(0, r.target.find(' ')), kind);
      // A CPU or CUDA log keeps one record per workload and target (tessel records best); the VTA
      // log the 16 fastest distinct configs of each task (vta::kRankedRecords: a build ranks them
      // again under each group's own epilogue).
      int most = kind == "vta" ? 16 : 1;
      EXPECT_LE(++perWorkload[std::make_pair(r.target, r.task.workloadKey)], most) << "records per workload in a shipped " << kind << " log";
      if (r.config) {
        EXPECT_TRUE(configs.insert({r.target, r.task.workloadKey, r.config->index}).second) << "a config shipped twice";
      }
      // A record tuned with TF32 allowed may compute on the fp32 units: its search weighed them
      // against TF32 tiles, the fp32 target's against 3xTF32 ones, and the two winners differ
      // (BERT-base's output projection on an H200: a fp32 tile 13% faster than the TF32 default).
      if (kind == "vta") continue;
      ASSERT_TRUE(r.task.dag);
      te::ComputeDAG dag = te::dagFromJson(nlohmann::json::parse(*r.task.dag));
      EXPECT_EQ(dag.workloadKey(), r.task.workloadKey);
      schedule::State state = schedule::replay(dag, r.steps);
      if (kind == "cuda") EXPECT_NO_THROW(passes::lowerForGpu(state, "kernel", passes::GpuLimits::cudaSm90()));
      else EXPECT_NO_THROW(passes::lower(state, "kernel"));
    }
  }
}

}  // namespace

// A record keeps the steps its config made when it was tuned. Where the template (a GPU default
// rule, a tile) has changed since, the config now makes other steps, and the record replays the
// old schedule (BERT-base's layer norm and softmax records kept older rule-8 blocks and made the
// network 8% slower on an H200): every shipped CUDA template record must still be what its config
// instantiates, so a rule change that leaves records behind fails here until they are tuned again.
TEST(ShippedRecords, CudaTemplateRecordsAreWhatTheirConfigsInstantiateToday) {
  std::vector<std::string> stale;
  for (const tune::TuningRecord& r : tune::shippedRecords("cuda/sm_90")) {
    if (!r.config || !r.task.dag) continue;
    te::ComputeDAG dag = te::dagFromJson(nlohmann::json::parse(*r.task.dag));
    auto task = tune::autotvm::makeGpuTuningTask(r.task.name, dag, target::Target::parse(r.target), passes::GpuLimits::cudaSm90(),
                                                 r.task.templateName);
    std::string name = r.target + " " + r.task.name + " (" + r.task.workloadKey.substr(0, 8) + ")";
    // By the knobs' values, as a resumed run matches its trials: a knob added since (at its first
    // option) or a new order of knobs keeps the config, where its index would not.
    tune::autotvm::EntityMatch match = task->space->matchEntity(r.config->entity);
    if (!match.config) {
      stale.push_back(name + ": " + match.mismatch);
      continue;
    }
    std::string now = schedule::printSteps(task->instantiate(*match.config));
    if (now != schedule::printSteps(r.steps)) stale.push_back(name);
  }
  EXPECT_TRUE(stale.empty()) << stale.size() << " stale records: " << fmt::format("{}", fmt::join(stale, "; "));
}
