#include "tune/GpuTemplateTestSupport.h"

#include <gtest/gtest.h>

#include <random>

#include "common/GpuKernelCheck.h"
#include "passes/GpuLimits.h"
#include "support/Error.h"
#include "support/TempDir.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/Record.h"
#include "tune/RecordLog.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/GpuTemplates.h"
#include "tune/autotvm/TuneTask.h"

namespace tessel::tunetest {

using namespace tune::autotvm;

bool instantiates(const GpuTemplateSpace& t, const ConfigEntity& config) {
  try {
    t.instantiate(config);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<ConfigEntity> fallbackAndRandomConfigs(const GpuTemplateSpace& t, int randomCount, uint64_t seed, int tries) {
  std::vector<ConfigEntity> configs = {t.space->get(t.fallback)};
  std::mt19937_64 rng(seed);
  for (int i = 0; int(configs.size()) <= randomCount && i < tries; ++i) {
    ConfigEntity c = t.space->get(rng() % t.space->size());
    if (instantiates(t, c)) configs.push_back(c);
  }
  return configs;
}

void tuneAndReplay(const te::ComputeDAG& dag, const std::string& templateName, bool fallbackIsDefault, uint64_t tunerSeed) {
  const target::Target target = target::Target::parse("opencl");
  auto task = makeGpuTuningTask("task", dag, target, passes::GpuLimits::forTarget(target));
  ASSERT_EQ(task->templateName, templateName);
  EXPECT_EQ(task->fallbackIsDefaultSchedule, fallbackIsDefault);
  TempDir dir("tessel-gpu-template");
  std::string log = dir.path() + "/records.log";
  tune::LocalBuilder builder;
  tune::LocalRunnerOptions ro;
  ro.number = 2;
  ro.repeat = 2;
  ro.checkCorrectness = true;
  ro.timeoutSeconds = 20;
  tune::LocalRunner runner(ro);
  RandomTuner tuner(task, tunerSeed);
  TuneTaskOptions o;
  o.nTrial = 4;
  o.batchSize = 2;
  o.confirmTop = 0;
  int ok = 0;
  {
    tune::RecordLogWriter writer(log);
    auto onTrial = [&](const ConfigEntity& config, const tune::MeasureInput& input, const tune::MeasureResult& r) {
      ok += r.ok();
      EXPECT_TRUE(r.ok() || r.errorNo == tune::MeasureErrorNo::InstantiationError) << r.errorMessage;
      if (r.errorNo != tune::MeasureErrorNo::InstantiationError)
        writer.append(tune::makeRecord(input, r, task->templateName, nullptr,
                                       tune::RecordConfig{int64_t(config.index()), config.toJson()["entity"]}));
    };
    tuneTask(task, tuner, builder, runner, o, {}, onTrial);
  }
  EXPECT_GE(ok, 1);  // random configs may be over a device's limits (instantiation errors, not logged)
  auto file = tune::readRecords(log);
  ASSERT_EQ(int(file.records.size()), ok);
  for (const auto& record : file.records) {
    EXPECT_EQ(record.task.templateName, templateName);
    ASSERT_TRUE(record.config.has_value());
    auto config = task->space->fromEntityJson(record.config->entity);
    ASSERT_TRUE(config.has_value());
    EXPECT_EQ(int64_t(config->index()), record.config->index);
    EXPECT_EQ(schedule::stepsToJson(task->instantiate(*config)), schedule::stepsToJson(record.steps));
    EXPECT_NO_THROW(kernelcheck::buildForGpu(schedule::replay(dag, record.steps), target.str()));
  }
}

}  // namespace tessel::tunetest
