// driver::listTuningTasks: one numbered list per tuner, the functions no template tunes listed
// apart, cold-cache measurement as the mode says, the selection by number and operator, and the
// tasks' weights by the keys their records carry (networkTaskWeights).
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "driver/NetworkTaskWeights.h"
#include "driver/TuningTasks.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"

namespace tessel::driver {
namespace {

PreparedModel smallResnet() {
  graph::registerStandardOps();
  graph::ModelOptions zoo;
  zoo.imageSize = 32;
  zoo.widthDivisor = 4;
  zoo.classes = 10;
  PrepareOptions o;
  o.winograd = {WinogradMode::Kind::Never, 0};
  return prepareModel(graph::buildModel("resnet-18", zoo), o);
}

TEST(TuningTasks, EachTunerListsItsTasksNumberedFromOne) {
  PreparedModel model = smallResnet();
  TaskList templates = listTuningTasks(model, {});
  ASSERT_FALSE(templates.tasks.empty());
  EXPECT_FALSE(templates.notTuned.empty()) << "pooling and softmax have no template";
  for (size_t i = 0; i < templates.tasks.size(); ++i) {
    EXPECT_EQ(templates.tasks[i].number, i + 1);
    EXPECT_NE(templates.tasks[i].tuning, nullptr);
  }
  TaskListOptions autoScheduler;
  autoScheduler.search = SearchKind::AutoScheduler;
  TaskList every = listTuningTasks(model, autoScheduler);
  EXPECT_EQ(every.tasks.size(), templates.tasks.size() + templates.notTuned.size()) << "a task per fused function";
  EXPECT_TRUE(every.notTuned.empty());
  for (const ListedTask& t : every.tasks) EXPECT_EQ(t.tuning, nullptr);
  EXPECT_NE(formatTaskList(every).find("auto: "), std::string::npos);
  EXPECT_EQ(taskPrefix(every.tasks[0], every), "[Task  1/" + fmt::format("{:>2}", every.tasks.size()) + "] ");
}

TEST(TuningTasks, ColdCachesAndSelectionFollowTheOptions) {
  PreparedModel model = smallResnet();
  TaskListOptions always;
  always.coldCache = ColdCacheMode::Always;
  for (const ListedTask& t : listTuningTasks(model, always).tasks) {
    EXPECT_TRUE(t.measureCold);
    EXPECT_TRUE(t.tuning->measure->coldCache);
  }
  // A network whose weights fit the caches is measured warm under auto.
  for (const ListedTask& t : listTuningTasks(model, {}).tasks) EXPECT_FALSE(t.measureCold);
  TaskList list = listTuningTasks(model, {});
  auto dense = selectTasks(list, {}, parseOps("Dense"));
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_EQ(dense[0].number, list.tasks.size()) << "the classifier comes last";
  EXPECT_EQ(selectTasks(list, {2}, {}).at(0).number, 2u);
  testsupport::expectContains(testsupport::errorOf([&] { selectTasks(list, {999}, {}); }), "there is no task 999");
  testsupport::expectContains(testsupport::errorOf([&] { parseOps("pool"); }), "unknown operator 'pool'");
}

TEST(TuningTasks, EachTunersTasksWeighAsOftenAsTheNetworkRunsThem) {
  PreparedModel model = smallResnet();
  std::map<std::string, double> weights = networkTaskWeights(model, target::Target::host());
  TaskListOptions autoScheduler;
  autoScheduler.search = SearchKind::AutoScheduler;
  bool repeated = false;
  for (const TaskList& list : {listTuningTasks(model, {}), listTuningTasks(model, autoScheduler)})
    for (const ListedTask& t : list.tasks) {
      ASSERT_TRUE(weights.count(recordedWorkloadKey(t))) << t.function.name;
      EXPECT_EQ(weights.at(recordedWorkloadKey(t)), double(t.function.weight)) << t.function.name;
      repeated = repeated || t.function.weight > 1;
    }
  EXPECT_TRUE(repeated) << "resnet-18 repeats its residual blocks' convolutions";
  testsupport::expectContains(testsupport::errorOf([&] { networkTaskWeights(model, target::Target::parse("vta")); }),
                              "task weights are of CPU and GPU targets' tasks");
}

}  // namespace
}  // namespace tessel::driver
