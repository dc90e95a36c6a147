#include "vta/Statistics.h"

#include <fmt/format.h>

namespace tessel::vta {

nlohmann::json Statistics::toJson() const {
  // nlohmann::ordered_json would keep this order too, but the listing below is the ordered view.
  return nlohmann::json{{"inp_load_nbytes", inputLoadBytes},   {"wgt_load_nbytes", weightLoadBytes},
                        {"acc_load_nbytes", accumulatorLoadBytes}, {"uop_load_nbytes", microOpLoadBytes},
                        {"out_store_nbytes", outputStoreBytes}, {"gemm_counter", gemmCounter},
                        {"alu_counter", aluCounter},            {"cycles", cycles}};
}

std::string Statistics::format() const {
  const std::pair<const char*, uint64_t> rows[] = {
      {"inp_load_nbytes", inputLoadBytes},   {"wgt_load_nbytes", weightLoadBytes},
      {"acc_load_nbytes", accumulatorLoadBytes}, {"uop_load_nbytes", microOpLoadBytes},
      {"out_store_nbytes", outputStoreBytes}, {"gemm_counter", gemmCounter},
      {"alu_counter", aluCounter},            {"cycles", cycles}};
  std::string text;
  for (const auto& [name, value] : rows) text += fmt::format("\t{:<16}: {:>16}\n", name, value);
  return text;
}

}  // namespace tessel::vta
