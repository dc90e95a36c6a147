#include "tune/Record.h"

#include <cmath>

#include "support/Error.h"
#include "support/Json.h"

namespace tessel::tune {

using json = nlohmann::json;
// Written with the keys in a fixed, readable order (version first), so that `head log` reads
// well; nlohmann::json would sort them.
using ordered = nlohmann::ordered_json;

namespace {

// ---- strict reading: every accessor names the field by its path ------------------------------

const json& field(const json& object, const std::string& path, const char* name) {
  std::string full = path.empty() ? name : path + "." + name;
  TESSEL_CHECK(object.is_object(), "{}: expected an object", path.empty() ? "record" : path);
  auto it = object.find(name);
  TESSEL_CHECK(it != object.end(), "missing field '{}'", full);
  return *it;
}

std::string stringField(const json& object, const std::string& path, const char* name) {
  const json& value = field(object, path, name);
  TESSEL_CHECK(value.is_string(), "{}{}{}: expected a string", path, path.empty() ? "" : ".", name);
  return value.get<std::string>();
}

double numberAt(const json& value, const std::string& where) { return jsonNumber(value, where); }

double numberField(const json& object, const std::string& path, const char* name) {
  return numberAt(field(object, path, name), path + "." + name);
}

int64_t integerField(const json& object, const std::string& path, const char* name) {
  return jsonInteger(field(object, path, name), path + "." + name);
}

// ---- writing --------------------------------------------------------------------------------

double finite(double value, const char* what) {
  TESSEL_CHECK(std::isfinite(value), "cannot write a record whose {} is {} (JSON has no such number)", what, value);
  return value;
}

ordered taskToJson(const RecordTask& task) {
  ordered j;
  j["workload_key"] = task.workloadKey;
  j["name"] = task.name;
  j["flops"] = finite(task.flops, "task.flops");
  if (task.fromTemplate()) {
    j["template"] = ordered{{"name", task.templateName}, {"args", task.templateArgs}};
  } else {
    j["template"] = nullptr;
  }
  // Optional (readers of the first records ignore it): written only when known.
  // Not outside text: tessel wrote it (dagToJson, or taskFromJson's dump of a value parseJson
  // read within its limits).
  if (task.dag) j["dag"] = ordered::parse(*task.dag);
  return j;
}

ordered resultToJson(const MeasureResult& r) {
  ordered j;
  ordered costs = ordered::array();
  for (double c : r.costs) costs.push_back(finite(c, "result.costs"));
  j["costs"] = costs;
  j["error_no"] = int(r.errorNo);
  j["error_name"] = measureErrorName(r.errorNo);
  j["error_message"] = r.errorMessage;
  j["calls_per_repeat"] = r.callsPerRepeat;
  j["build_seconds"] = finite(r.buildSeconds, "result.build_seconds");
  j["run_seconds"] = finite(r.runSeconds, "result.run_seconds");
  j["all_cost"] = finite(r.allCost, "result.all_cost");
  j["timestamp"] = finite(r.timestamp, "result.timestamp");
  // Written only when set: readers of the first records ignore them, and older records lack them.
  if (r.confirmed) {
    j["confirmed"] = true;
    j["confirmation"] = r.confirmation;
  }
  if (r.underLoad) j["under_load"] = true;
  if (r.sameAs) j["same_as"] = *r.sameAs;
  return j;
}

ordered orderedRecordJson(const TuningRecord& record) {
  TESSEL_CHECK(record.config.has_value() == record.task.fromTemplate(),
               "a record has a config exactly when its task names a template (task '{}')", record.task.name);
  ordered schedule;
  schedule["steps"] = schedule::stepsToJson(record.steps);
  if (record.config) {
    schedule["config"] = ordered{{"template", record.task.templateName}, {"index", record.config->index}, {"entity", record.config->entity}};
  } else {
    schedule["config"] = nullptr;
  }
  ordered j;
  j["version"] = record.version;
  j["target"] = record.target;
  if (record.machine)
    j["machine"] = ordered{{"class", record.machine->family}, {"cores", record.machine->cores}, {"cpu", record.machine->cpu}};
  j["task"] = taskToJson(record.task);
  j["schedule"] = schedule;
  j["result"] = resultToJson(record.result);
  return j;
}

// ---- reading --------------------------------------------------------------------------------

RecordTask taskFromJson(const json& j) {
  RecordTask task;
  task.workloadKey = stringField(j, "task", "workload_key");
  TESSEL_CHECK(!task.workloadKey.empty(), "task.workload_key: must not be empty");
  task.name = stringField(j, "task", "name");
  task.flops = jsonNumber(field(j, "task", "flops"), "task.flops", 0, kMaxRecordFlops);
  const json& templ = field(j, "task", "template");
  if (!templ.is_null()) {
    task.templateName = stringField(templ, "task.template", "name");
    TESSEL_CHECK(!task.templateName.empty(), "task.template.name: must not be empty");
    task.templateArgs = field(templ, "task.template", "args");
  }
  if (auto it = j.find("dag"); it != j.end() && !it->is_null()) {
    TESSEL_CHECK(it->is_object(), "task.dag: expected an object");
    task.dag = std::make_shared<const std::string>(it->dump());
  }
  return task;
}

std::optional<RecordConfig> configFromJson(const json& schedule, const RecordTask& task) {
  const json& j = field(schedule, "schedule", "config");
  if (j.is_null()) {
    TESSEL_CHECK(!task.fromTemplate(), "schedule.config: missing for a task of template '{}'", task.templateName);
    return std::nullopt;
  }
  std::string templ = stringField(j, "schedule.config", "template");
  TESSEL_CHECK(task.fromTemplate(), "schedule.config: a config of template '{}' for a task without a template", templ);
  TESSEL_CHECK(templ == task.templateName, "schedule.config.template: '{}' differs from task.template.name '{}'", templ,
               task.templateName);
  RecordConfig config;
  config.index = integerField(j, "schedule.config", "index");
  TESSEL_CHECK(config.index >= 0, "schedule.config.index: must not be negative, got {}", config.index);
  config.entity = field(j, "schedule.config", "entity");
  return config;
}

MeasureResult resultFromJson(const json& j) {
  MeasureResult r;
  const json& costs = field(j, "result", "costs");
  TESSEL_CHECK(costs.is_array(), "result.costs: expected an array");
  for (size_t i = 0; i < costs.size(); ++i) {
    r.costs.push_back(numberAt(costs[i], fmt::format("result.costs[{}]", i)));
    TESSEL_CHECK(r.costs.back() >= 0, "result.costs[{}]: a cost cannot be negative", i);
    TESSEL_CHECK(r.costs.back() >= kMinRecordCostSeconds, "result.costs[{}]: {} s is less than any measurement takes ({} s)", i,
                 jsonEcho(costs[i]), kMinRecordCostSeconds);
  }
  int64_t number = integerField(j, "result", "error_no");
  TESSEL_CHECK(number >= 0 && number < kMeasureErrorCount, "result.error_no: {} is not an error number (0..{})", number,
               kMeasureErrorCount - 1);
  r.errorNo = MeasureErrorNo(number);
  std::string name = stringField(j, "result", "error_name");
  TESSEL_CHECK(name == measureErrorName(r.errorNo), "result.error_name: '{}' does not match error_no {} ({})", name, number,
               measureErrorName(r.errorNo));
  // A valid trial must have been timed, or min() over costs would pick an untimed one.
  TESSEL_CHECK(!r.ok() || !r.costs.empty(), "result.costs: empty for a trial without error");
  r.errorMessage = stringField(j, "result", "error_message");
  r.callsPerRepeat = int(integerField(j, "result", "calls_per_repeat"));
  r.buildSeconds = numberField(j, "result", "build_seconds");
  r.runSeconds = numberField(j, "result", "run_seconds");
  r.allCost = numberField(j, "result", "all_cost");
  r.timestamp = numberField(j, "result", "timestamp");
  if (auto it = j.find("confirmed"); it != j.end()) {
    TESSEL_CHECK(it->is_boolean(), "result.confirmed: expected true or false");
    r.confirmed = it->get<bool>();
    if (r.confirmed) r.confirmation = j.value("confirmation", json(nullptr));
  }
  if (auto it = j.find("under_load"); it != j.end()) {
    TESSEL_CHECK(it->is_boolean(), "result.under_load: expected true or false");
    r.underLoad = it->get<bool>();
  }
  if (j.contains("same_as")) {
    r.sameAs = integerField(j, "result", "same_as");
    TESSEL_CHECK(*r.sameAs >= 0, "result.same_as: a config index cannot be negative, got {}", *r.sameAs);
  }
  return r;
}

}  // namespace

double TuningRecord::gflops() const {
  double cost = this->cost();
  return std::isfinite(cost) && cost > 0 ? task.flops / cost / 1e9 : 0.0;
}

TuningRecord makeRecord(const MeasureInput& input, const MeasureResult& result, const std::string& templateName,
                        const nlohmann::json& templateArgs, std::optional<RecordConfig> config) {
  TESSEL_ICHECK(input.task != nullptr);
  TuningRecord record;
  record.target = input.task->target.str();
  if (input.task->target.isCpu()) {
    const target::CpuMachine& cpu = input.task->target.cpu;
    record.machine = RecordMachine{cpu.recordFamily(), cpu.cores, cpu.name};
  }
  record.task.workloadKey = input.task->workloadKey;
  record.task.name = input.task->name;
  record.task.flops = input.task->dag.flopCount();
  record.task.templateName = templateName;
  record.task.templateArgs = templateName.empty() ? json(nullptr) : templateArgs;
  record.task.dag = input.task->dagJson;
  record.steps = input.steps;
  record.config = std::move(config);
  record.result = result;
  return record;
}

json recordToJson(const TuningRecord& record) { return json(orderedRecordJson(record)); }

TuningRecord recordFromJson(const json& j) {
  TESSEL_CHECK(j.is_object(), "a record must be a JSON object");
  const json& version = field(j, "", "version");
  // Only version 1 exists so far; an older version would be upgraded here, field by field.
  TESSEL_CHECK(jsonInteger(version, "version") == kRecordVersion, "version: record format version {} is not one this tessel reads (it reads {})",
               jsonEcho(version), kRecordVersion);
  TuningRecord record;
  record.version = kRecordVersion;
  record.target = stringField(j, "", "target");
  TESSEL_CHECK(!record.target.empty(), "target: must not be empty");
  if (j.contains("machine")) {
    const json& m = j["machine"];
    RecordMachine machine{stringField(m, "machine", "class"), int(integerField(m, "machine", "cores")), stringField(m, "machine", "cpu")};
    TESSEL_CHECK(!machine.family.empty() && machine.cores >= 1 && machine.cores <= 100000,
                 "machine: expected a class and from 1 to 100000 cores");
    record.machine = machine;
  }
  record.task = taskFromJson(field(j, "", "task"));
  const json& schedule = field(j, "", "schedule");
  try {
    record.steps = schedule::stepsFromJson(field(schedule, "schedule", "steps"));
  } catch (const Error& e) {
    throw e.withContext("schedule.steps");
  }
  record.config = configFromJson(schedule, record.task);
  record.result = resultFromJson(field(j, "", "result"));
  TESSEL_CHECK(!record.result.sameAs || record.config, "result.same_as: names a config, and the record has none");
  TESSEL_CHECK(!record.result.sameAs || !record.result.confirmed, "result.same_as: a confirmation is always measured");
  return record;
}

std::string recordToLine(const TuningRecord& record) {
  // An error message can carry any bytes a compiler printed; invalid UTF-8 is replaced rather
  // than failing the trial's record.
  return orderedRecordJson(record).dump(-1, ' ', false, ordered::error_handler_t::replace);
}

TuningRecord recordFromLine(const std::string& line) {
  return recordFromJson(parseJson(line, ""));
}

}  // namespace tessel::tune
