// tessel-fuzz-seeds DIR: writes one valid input per fuzzer into DIR/<fuzzer>/, made by the
// current code (a record line from a real task, a step list, a params file, a .npy file, a
// graph plan, a VTA program and configuration, one call of each RPC method, an ONNX model), so
// that the seeds keep up with the formats, and JSON nested around the readers' limit for each
// JSON harness. The inputs the fuzzers found are kept apart, in fuzz/corpus/.
#include <filesystem>
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "../tests/vta/BlockedMatmul.h"
#include "graph/frontends/Onnx.h"
#include "ops/Examples.h"
#include "runtime/Npy.h"
#include "runtime/Params.h"
#include "schedule/Steps.h"
#include "support/Error.h"
#include "support/Files.h"
#include "tessel_rpc.pb.h"
#include "tune/Record.h"
#include "vta/CommandStream.h"
#include "vta/Program.h"
#include "vta/Simulator.h"

using namespace tessel;

namespace {

std::string root;

void seed(const std::string& fuzzer, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(root + "/" + fuzzer);
  writeFile(root + "/" + fuzzer + "/" + name, bytes);
}

std::vector<schedule::StepPtr> matmulSteps() {
  return {std::make_shared<schedule::CacheWriteStep>("C", "local"),
          std::make_shared<schedule::SplitStep>("C", "i", std::vector<int64_t>{4}),
          std::make_shared<schedule::SplitStep>("C", "j", std::vector<int64_t>{8}),
          std::make_shared<schedule::ReorderStep>("C", std::vector<std::string>{"i.0", "j.0", "i.1", "j.1"}),
          std::make_shared<schedule::AnnotateStep>("C", "i.0", schedule::Annotation::Parallel),
          std::make_shared<schedule::ComputeAtStep>("C.local", "C", "j.0"),
          std::make_shared<schedule::AnnotateStep>("C", "j.1", schedule::Annotation::Vectorize)};
}

void recordsSeeds() {
  auto task = tune::makeMeasureTask("matmul", ops::exampleByName("matmul", {16, 16, 16}));
  tune::MeasureResult ok;
  ok.costs = {1e-5, 1.2e-5};
  ok.callsPerRepeat = 4;
  ok.timestamp = 1.7e9;
  tune::TuningRecord record = tune::makeRecord(tune::MeasureInput{task, matmulSteps(), ""}, ok);
  std::string line = tune::recordToLine(record);
  tune::TuningRecord failed = tune::makeRecord(tune::MeasureInput{task, {}, ""}, tune::errorResult(tune::MeasureErrorNo::RuntimeDeviceError, "x"));
  seed("records_fuzzer", "log", line + "\n" + tune::recordToLine(failed) + "\n" + line.substr(0, line.size() / 2));
  record.task.dag.reset();  // as records were written before they carried their DAG
  seed("records_fuzzer", "old_record", tune::recordToLine(record) + "\n");
}

void stepsSeeds() {
  seed("step_list_fuzzer", "matmul", schedule::stepsToJson(matmulSteps()).dump());
  std::vector<schedule::StepPtr> conv = {
      std::make_shared<schedule::ComputeInlineStep>("pad_temp"),
      std::make_shared<schedule::FuseStep>("T_relu", std::vector<std::string>{"i0", "i1"}),
      std::make_shared<schedule::SplitStep>("conv", "ff", std::vector<int64_t>{2, 2}),
      std::make_shared<schedule::PragmaStep>("conv", "nn", "auto_unroll_max_step", "16")};
  seed("step_list_fuzzer", "conv", schedule::stepsToJson(conv).dump());
}

void tensorsSeeds() {
  auto t = runtime::Tensor::empty({2, 3}, DataType::float32());
  for (int i = 0; i < 6; ++i) t.dataAs<float>()[i] = float(i) - 2.5f;
  auto b = runtime::Tensor::empty({4}, DataType::int8());
  for (int i = 0; i < 4; ++i) b.dataAs<int8_t>()[i] = int8_t(i * 40);
  runtime::saveParams({{"weight", t}, {"bias", b}}, root + "/params");
  seed("params_fuzzer", "two", readFile(root + "/params"));
  runtime::saveNpy(t, root + "/npy");
  seed("npy_fuzzer", "float32", readFile(root + "/npy"));
  runtime::saveNpy(b, root + "/npy");
  seed("npy_fuzzer", "int8", readFile(root + "/npy"));
}

void plansSeeds() {
  // The plan of the graph_plan_fuzzer's module: data -> matmul(w) -> add(itself) -> relu.
  nlohmann::json plan = {
      {"format", "tessel.graph_executor"}, {"version", 1}, {"storages", {32, 32, 32}},
      {"tensors",
       {{{"name", "data"}, {"dtype", "float32"}, {"shape", {2, 4}}, {"storage", 0}},
        {{"name", "w"}, {"dtype", "float32"}, {"shape", {4, 4}}, {"param", "w"}},
        {{"name", "product"}, {"dtype", "float32"}, {"shape", {2, 4}}, {"storage", 1}},
        {{"name", "sum"}, {"dtype", "float32"}, {"shape", {2, 4}}, {"storage", 2}},
        {{"name", "out"}, {"dtype", "float32"}, {"shape", {2, 4}}, {"storage", 1}}}},
      {"inputs", {0}}, {"outputs", {4}},
      {"calls",
       {{{"kernel", "fused_fuzz_matmul_0"}, {"args", {0, 1, 2}}},
        {{"kernel", "fused_fuzz_add_1"}, {"args", {2, 2, 3}}},
        {{"kernel", "fused_fuzz_relu_2"}, {"args", {3, 4}}}}}};
  seed("graph_plan_fuzzer", "three_calls", plan.dump(1));
}

void vtaSeeds() {
  seed("vta_config_fuzzer", "default", vta::HardwareConfig{}.toJson().dump(1));
  vta::Simulator recorder;
  vta::CommandStream stream(recorder);
  vta::testing::MatmulShape shape{.m = 16, .n = 16, .k = 32, .tileM = 1, .tileN = 1, .tileK = 1, .epilogue = true};
  vta::testing::recordMatmul(stream, shape, vta::testing::randomMatmulData(shape, 1));
  seed("vta_program_fuzzer", "matmul", stream.finishProgram().toJson().dump());
}

void rpcSeeds() {
  auto message = [](int method, const google::protobuf::Message& m) { return std::string(1, char(method)) + m.SerializeAsString(); };
  rpc::proto::RegisterRequest reg;
  reg.set_key("cpu");
  reg.set_address("127.0.0.1:9091");
  seed("rpc_fuzzer", "register", message(0, reg));
  rpc::proto::DeviceRequest request;
  request.set_key("cpu");
  request.set_timeout_ms(10);
  seed("rpc_fuzzer", "request_device", message(3, request));
  rpc::proto::OpenSessionRequest open;
  open.set_client("fuzz");
  seed("rpc_fuzzer", "open_session", message(7, open));
  rpc::proto::UploadRequest upload;
  upload.set_session_id(1);
  upload.set_name("kernel.so");
  upload.set_data("\x7f" "ELF");
  seed("rpc_fuzzer", "upload", message(9, upload));
  rpc::proto::MeasureRequest measure;
  measure.set_library("kernel.so");
  measure.set_kernel("k");
  measure.set_number(1);
  measure.set_repeat(1);
  measure.set_timeout_s(1);
  seed("rpc_fuzzer", "measure", message(10, measure));
}

/// A small ONNX model (conv with bias, batch norm, relu, flatten, gemm, softmax; opset 13) built
/// with ONNX's own protobuf messages.
void onnxSeeds() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("seed");
  auto tensorType = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> shape) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  tensorType(g->add_input(), "x", {1, 2, 4, 4});
  tensorType(g->add_output(), "y", {1, 3});
  auto initializer = [&](const std::string& name, std::vector<int64_t> shape) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : shape) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(float(i % 7) * 0.25f - 0.5f);
  };
  initializer("w", {3, 2, 3, 3});
  initializer("b", {3});
  for (auto name : {"scale", "bias", "mean"}) initializer(name, {3});
  auto* var = g->add_initializer();
  var->set_name("var");
  var->set_data_type(onnx::TensorProto::FLOAT);
  var->add_dims(3);
  for (int i = 0; i < 3; ++i) var->add_float_data(1.0f);
  initializer("fc", {3, 48});
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto* conv = node("Conv", {"x", "w", "b"}, "c");
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, "n");
  node("Relu", {"n"}, "r");
  node("Flatten", {"r"}, "f");
  auto* gemm = node("Gemm", {"f", "fc"}, "g");
  auto* transB = gemm->add_attribute();
  transB->set_name("transB");
  transB->set_type(onnx::AttributeProto::INT);
  transB->set_i(1);
  node("Softmax", {"g"}, "y");
  std::string bytes;
  TESSEL_CHECK(model.SerializeToString(&bytes), "serializing the ONNX seed");
  graph::importOnnxBytes(bytes, "seed");  // the seed must be valid
  seed("onnx_fuzzer", "conv_gemm", bytes);
}

/// `depth` arrays nested in one another: the probe's hostile value, {"version":[[[...]]]} of
/// 150,000 levels, crashed every reader (issue 39). Each JSON harness gets it in the place of
/// one of its fields at the limit of 256 levels (read), one past it (refused) and 30,000 levels
/// deep, which stays under run-fuzzer.sh's -max_len.
std::string nestedArrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

void deepNestingSeeds() {
  struct Place {
    const char* fuzzer;
    const char* before;  // the document up to the nested value
    const char* after;
    size_t outerLevels;  // the levels `before` opens
  };
  const Place places[] = {{"records_fuzzer", "{\"version\":", "}\n", 1},
                          {"step_list_fuzzer", "", "", 0},
                          {"graph_plan_fuzzer", "{\"format\":\"tessel.graph_executor\",\"version\":1,\"tensors\":", "}", 1},
                          {"vta_config_fuzzer", "{\"LOG_BLOCK\":", "}", 1},
                          {"vta_program_fuzzer", "{\"instructions\":", "}", 1}};
  for (const Place& p : places) {
    for (size_t depth : {size_t(256), size_t(257), size_t(30000)})
      seed(p.fuzzer, fmt::format("nested_{}", depth), p.before + nestedArrays(depth - p.outerLevels) + p.after);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: tessel-fuzz-seeds DIR\n");
    return 2;
  }
  root = argv[1];
  try {
    recordsSeeds();
    stepsSeeds();
    tensorsSeeds();
    plansSeeds();
    vtaSeeds();
    rpcSeeds();
    onnxSeeds();
    deepNestingSeeds();
  } catch (const std::exception& e) {
    fmt::print(stderr, "tessel-fuzz-seeds: {}\n", e.what());
    return 1;
  }
  return 0;
}
