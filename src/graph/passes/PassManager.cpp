#include "graph/passes/PassManager.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

#include "graph/passes/GraphPasses.h"
#include "passes/GpuLimits.h"
#include "support/Error.h"

namespace tessel::graph {

const std::vector<GraphPass>& graphPasses() {
  static const std::vector<GraphPass> passes = {
      {"simplify_inference", "batch norm with constant statistics -> multiply and add per channel", simplifyInference},
      {"fold_constants", "evaluate operators whose inputs are all constants", foldConstants},
      {"fold_scale_axis", "push per-channel multiplies into conv2d / depthwise / dense weights", foldScaleAxis},
      {"patch_products", "convolutions over patches that do not overlap (stride = kernel > 1) -> reshapes and a matrix product",
       patchProducts},
      {"collapse_layout_chains", "transposes and reshapes that leave every element in place -> one reshape or none",
       collapseLayoutChains},
      {"combine_parallel_products", "products of one value by constant weights (query, key, value) -> one product and slices",
       combineParallelProducts},
      {"convert_layout_nhwc", "image operators to NHWC, transposes at the boundaries",
       [](const Graph& g) { return convertLayout(g, ops::Layout::NHWC); }},
      {"convert_layout_nchw", "image operators to NCHW, transposes at the boundaries",
       [](const Graph& g) { return convertLayout(g, ops::Layout::NCHW); }},
      {"use_winograd", "every stride-1 3x3 NHWC convolution to Winograd F(4x4, 3x3)",
       [](const Graph& g) { return useWinograd(g, [](const Graph&, int) { return 4; }); }},
      {"use_packed_weights", "every NHWC convolution's and matrix product's constant weight packed by blocks of 64, 32 or 16 output channels",
       [](const Graph& g) { return usePackedWeights(g, defaultPackChoice()); }},
      {"split_reductions", "products with too few GEMM tiles for an H200's 132 multiprocessors -> partial products and their sum",
       [](const Graph& g) { return splitProductReductions(g, gpuReductionSplitChoice(passes::GpuLimits::cudaSm90().multiProcessorCount)); }},
      {"fuse_layouts_into_products", "GPU: layout ops read only by a matrix product computed in its operand copies",
       fuseLayoutsIntoProducts},
      {"fuse_attention", "GPU: attention's scores, scale, mask and softmax computed in the context product's function",
       fuseAttention},
      {"fuse_separable_blocks", "pointwise convolutions marked to share a function with the depthwise one before them",
       fuseSeparableBlocks},
      {"quantize", "int8 quantization with TVM's defaults (global scale 8, power-of-two weights, first conv2d and dense in float)",
       [](const Graph& g) { return quantize(g); }},
      {"graph_pack", "NCHW1n16c activations and OIHW16o16i weights from max_pool2d to global_avg_pool2d",
       [](const Graph& g) { return graphPack(g); }},
      {"eliminate_dead_code", "drop nodes no output depends on", eliminateDeadCode},
  };
  return passes;
}

const GraphPass& lookupGraphPass(const std::string& name) {
  for (const GraphPass& p : graphPasses())
    if (p.name == name) return p;
  std::vector<std::string> names;
  for (const GraphPass& p : graphPasses()) names.push_back(p.name);
  fail("unknown graph pass '{}' (known: {})", name, fmt::join(names, ", "));
}

Graph runPasses(const Graph& graph, const std::vector<std::string>& passes, const PassRunOptions& options) {
  for (const std::string& p : options.printAfter)
    if (p != "all") lookupGraphPass(p);
  TESSEL_CHECK(options.printAfter.empty() || options.printTo, "printing after passes needs a stream");
  Graph current = graph;
  for (const std::string& name : passes) {
    const GraphPass& pass = lookupGraphPass(name);
    try {
      current = pass.run(current);
    } catch (const Error& e) {
      throw e.withContext("graph pass " + name);
    }
    if (options.printAfter.count(name) || options.printAfter.count("all"))
      *options.printTo << "// after " << name << "\n" << current.toString() << "\n";
  }
  return current;
}

std::vector<std::string> standardPipeline(const OptimizeOptions& options) {
  if (!options.simplify) return {};
  std::vector<std::string> passes{"simplify_inference", "fold_constants"};
  if (options.desiredLayout)
    passes.push_back(*options.desiredLayout == ops::Layout::NHWC ? "convert_layout_nhwc" : "convert_layout_nchw");
  // Layout conversion leaves weight transposes; the scale fold needs constant weights; the
  // patch products' weights fold like them, and their layout ops meet the conversion's.
  passes.insert(passes.end(), {"fold_constants", "fold_scale_axis", "patch_products", "fold_constants", "collapse_layout_chains"});
  if (options.combineProducts) passes.push_back("combine_parallel_products");
  passes.push_back("eliminate_dead_code");
  if (options.fuseSeparable) passes.push_back("fuse_separable_blocks");
  return passes;
}

std::optional<ops::Layout> parseDesiredLayout(const std::string& text) {
  if (text == "keep") return std::nullopt;
  if (text == "NHWC" || text == "nhwc") return ops::Layout::NHWC;
  if (text == "NCHW" || text == "nchw") return ops::Layout::NCHW;
  fail("unknown layout '{}' (NHWC, NCHW or keep)", text);
}

Graph optimizeGraph(const Graph& graph, const OptimizeOptions& options, const PassRunOptions& run) {
  Graph optimized = runPasses(graph, standardPipeline(options), run);
  if (!options.simplify) return optimized;
  return applyPacking(applyWinograd(optimized, options.winograd, run), options.pack, run);
}

namespace {

/// A rewrite with a per-layer choice, then its new weights folded (printed after `name`).
Graph applyChoicePass(const Graph& optimized, const std::string& name, const std::function<Graph(const Graph&)>& rewrite,
                      const PassRunOptions& run) {
  Graph rewritten;
  try {
    rewritten = rewrite(optimized);
  } catch (const Error& e) {
    throw e.withContext("graph pass " + name);
  }
  if (run.printAfter.count(name) || run.printAfter.count("all")) *run.printTo << "// after " << name << "\n" << rewritten.toString() << "\n";
  return runPasses(rewritten, {"fold_constants", "eliminate_dead_code"}, run);
}

}  // namespace

Graph applyWinograd(const Graph& optimized, const WinogradChoice& choice, const PassRunOptions& run, ops::Layout layout) {
  if (!choice) return optimized;
  return applyChoicePass(optimized, "use_winograd", [&](const Graph& g) { return useWinograd(g, choice, layout); }, run);
}

std::vector<Graph> cpuWinogradVariants(const Graph& optimized, size_t l2Bytes, const PassRunOptions& run) {
  std::vector<Graph> variants{applyWinograd(optimized, defaultWinogradChoice(l2Bytes), run)};
  WinogradChoice large = largeWinogradChoice(l2Bytes);
  for (size_t i = 0; i < optimized.nodes().size(); ++i)
    if (winogradCandidate(optimized, int(i)) && large(optimized, int(i)) != 0) {
      variants.push_back(applyWinograd(optimized, large));
      break;
    }
  return variants;
}

Graph applyPacking(const Graph& optimized, const PackChoice& choice, const PassRunOptions& run) {
  if (!choice) return optimized;
  return applyChoicePass(optimized, "use_packed_weights", [&](const Graph& g) { return usePackedWeights(g, choice); }, run);
}

Graph applyReductionSplits(const Graph& optimized, const SplitChoice& choice, const PassRunOptions& run) {
  if (!choice) return optimized;
  return applyChoicePass(optimized, "split_reductions", [&](const Graph& g) { return splitProductReductions(g, choice); }, run);
}

}  // namespace tessel::graph
