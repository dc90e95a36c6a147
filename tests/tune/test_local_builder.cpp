#include <gtest/gtest.h>

#include <dlfcn.h>

#include <chrono>
#include <csignal>
#include <filesystem>

#include "support/Clock.h"
#include "support/Files.h"
#include "support/TempDir.h"
#include "target/HostCpu.h"
#include "tune/LocalBuilder.h"
#include "tune/TuneTestSupport.h"

using namespace tessel;
using namespace tessel::tune;
using namespace tessel::tunetest;
using testsupport::expectContains;

namespace {

LocalBuilderOptions faultyOptions(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  LocalBuilderOptions options;
  options.timeout = timeout;
  options.sourceGenerator = faultySource;
  return options;
}

}  // namespace

TEST(LocalBuilder, BuildsALibraryWithTheTasksArguments) {
  LocalBuilder builder;
  auto results = builder.build({MeasureInput{smallMatmul(), tiledMatmulSteps(), ""}});
  ASSERT_EQ(results.size(), 1u);
  const auto& r = results[0];
  ASSERT_TRUE(r.ok()) << r.errorMessage;
  EXPECT_TRUE(std::filesystem::exists(r.libraryPath));
  EXPECT_EQ(r.libraryPath.rfind(builder.directory(), 0), 0u);
  EXPECT_EQ(r.kernelName, "matmul");
  ASSERT_EQ(r.args.size(), 3u);
  EXPECT_EQ(r.numInputs, 2);
  EXPECT_EQ(r.args[2].name, "C");
  EXPECT_EQ(r.args[2].shape, (std::vector<int64_t>{16, 16}));
  EXPECT_GT(r.buildSeconds, 0);
  builder.discard(r);
  EXPECT_FALSE(std::filesystem::exists(r.libraryPath));
}

// Issue 39: any number of parallel builds was accepted (1024 on 2 cores).
TEST(LocalBuilder, RefusesMoreParallelBuildsThanFourPerCore) {
  int cores = target::availableCores();
  EXPECT_EQ(mostParallelBuilds(), 4 * cores);
  LocalBuilderOptions options;
  options.nParallel = 4 * cores + 1;
  expectContains(testsupport::errorOf([&] { LocalBuilder builder(options); }),
                 fmt::format("LocalBuilder: {} parallel builds on {} cores; at most {}", 4 * cores + 1, cores, 4 * cores));
  options.nParallel = 4 * cores;
  EXPECT_NO_THROW(LocalBuilder builder(options));
}

TEST(LocalBuilder, AStepThatDoesNotApplyIsAnInstantiationError) {
  LocalBuilder builder;
  MeasureInput input{smallMatmul(), {std::make_shared<schedule::SplitStep>("C", "nope", std::vector<int64_t>{4})}, ""};
  auto r = builder.build({input})[0];
  EXPECT_EQ(r.errorNo, MeasureErrorNo::InstantiationError);
  expectContains(r.errorMessage, "nope");
  expectContains(r.errorMessage, "step 1");
  EXPECT_TRUE(r.libraryPath.empty());
}

TEST(LocalBuilder, ACrashWhileLoweringIsAnInstantiationErrorNotTheEnd) {
  LocalBuilder builder(faultyOptions());
  auto r = builder.build({candidate(smallMatmul(), "lower_crash"), candidate(smallMatmul(), "")});
  EXPECT_EQ(r[0].errorNo, MeasureErrorNo::InstantiationError);
  expectContains(r[0].errorMessage, "crashed");
  expectContains(r[0].errorMessage, "signal 11");
  EXPECT_TRUE(r[1].ok()) << r[1].errorMessage;
}

TEST(LocalBuilder, ACompilerFailureIsACompileHostErrorWithTheCompilersMessage) {
  LocalBuilder builder(faultyOptions());
  auto r = builder.build({candidate(smallMatmul(), "syntax")})[0];
  EXPECT_EQ(r.errorNo, MeasureErrorNo::CompileHostError);
  expectContains(r.errorMessage, "error:");           // the compiler's own words
  expectContains(r.errorMessage, "this is not C++");  // it quotes the offending line
  expectContains(r.errorMessage, builder.directory());  // the source's path
}

TEST(LocalBuilder, AHangingLoweringIsABuildTimeout) {
  LocalBuilder builder(faultyOptions(std::chrono::milliseconds(700)));
  auto start = std::chrono::steady_clock::now();
  auto r = builder.build({candidate(smallMatmul(), "lower_hang")})[0];
  EXPECT_EQ(r.errorNo, MeasureErrorNo::BuildTimeoutError);
  expectContains(r.errorMessage, "timed out");
  EXPECT_LT(secondsSince(start), 3.0);
}

/// One candidate built with a fake compiler `name` that sleeps 30 s whatever it is asked, under
/// a 700-ms build timeout; `seconds` receives how long the build took.
BuildResult buildWithSleepingCompiler(const std::string& name, double& seconds) {
  TempDir dir("tessel-test-cc");
  std::string compiler = dir.path() + "/" + name;
  writeFile(compiler, "#!/bin/sh\nexec sleep 30\n");
  std::filesystem::permissions(compiler, std::filesystem::perms::owner_all);
  LocalBuilderOptions options;
  options.timeout = std::chrono::milliseconds(700);
  options.compileOptions = codegen::CompileOptions{};
  options.compileOptions->compiler = compiler;
  LocalBuilder builder(options);
  auto start = std::chrono::steady_clock::now();
  auto r = builder.build({candidate(smallMatmul(), "")})[0];
  seconds = secondsSince(start);
  return r;
}

TEST(LocalBuilder, AHangingCompilerIsABuildTimeout) {
  double seconds = 0;
  auto r = buildWithSleepingCompiler("slow-cc", seconds);
  EXPECT_EQ(r.errorNo, MeasureErrorNo::BuildTimeoutError) << r.errorMessage;
  expectContains(r.errorMessage, "while compiling");
  EXPECT_LT(seconds, 3.0);
}

TEST(LocalBuilder, AGccThatHangsOnItsQueriesIsABuildTimeout) {
  // A gcc driver is first asked for its linker and libgomp (to link without the driver): a
  // driver that hangs there is a build timeout too, not three waits without a limit.
  double seconds = 0;
  auto r = buildWithSleepingCompiler("slow-gcc", seconds);
  EXPECT_EQ(r.errorNo, MeasureErrorNo::BuildTimeoutError) << r.errorMessage;
  expectContains(r.errorMessage, "did not answer its queries");
  EXPECT_LT(seconds, 3.0);
}

TEST(LocalBuilder, ParallelBuildsOverlap) {
  // Two builds whose code generation waits for the other's: they succeed only if they run at
  // the same time (one after the other, the first would wait in vain). A test of elapsed time
  // failed here when other tests kept both cores busy.
  TempDir meeting("tessel-test-meet");
  auto options = faultyOptions(std::chrono::milliseconds(30000));
  options.nParallel = 2;
  LocalBuilder builder(options);
  const std::string config = "meet_2:" + meeting.path();
  auto r = builder.build({candidate(smallMatmul(), config), candidate(smallMatmul(), config)});
  ASSERT_TRUE(r[0].ok()) << r[0].errorMessage;
  ASSERT_TRUE(r[1].ok()) << r[1].errorMessage;
  EXPECT_NE(r[0].libraryPath, r[1].libraryPath);
}

TEST(LocalBuilder, RejectsBadOptions) {
  LocalBuilderOptions options;
  options.timeout = std::chrono::milliseconds(0);
  expectContains(testsupport::errorOf([&] { LocalBuilder b(options); }), "timeout");
  options.timeout = std::chrono::milliseconds(1000);
  options.nParallel = -1;
  expectContains(testsupport::errorOf([&] { LocalBuilder b(options); }), "n_parallel");
}

TEST(LocalBuilder, KernelNamesAreCIdentifiers) {
  EXPECT_EQ(LocalBuilder::kernelName(*makeMeasureTask("conv2d nchw/1", smallMatmul()->dag)), "conv2d_nchw_1");
  EXPECT_EQ(LocalBuilder::kernelName(*makeMeasureTask("", smallMatmul()->dag)), "default_function");
  EXPECT_EQ(LocalBuilder::kernelName(*makeMeasureTask("3x3", smallMatmul()->dag)), "k_3x3");
}

namespace {

// Faults for candidates that share a translation unit: the same configs as faultySource.
codegen::CFunctionSource faultyFunction(const MeasureInput& input, const std::string& kernelName) {
  if (input.config == "lower_crash") raise(SIGSEGV);
  auto function = LocalBuilder::generateFunction(input, kernelName);
  if (input.config == "syntax") function.text += "\nthis is not C++;\n";
  return function;
}

}  // namespace

TEST(LocalBuilder, ABatchSharesTranslationUnitsAndOnlyTheGuiltyFail) {
  LocalBuilderOptions options;
  options.nParallel = 2;
  options.functionGenerator = faultyFunction;
  LocalBuilder builder(options);
  // 4 fails before compiling; the rest are dealt round-robin over two units: {0, 2} and {1, 3}.
  auto r = builder.build({MeasureInput{smallMatmul(), tiledMatmulSteps(), ""}, MeasureInput{smallMatmul(), {}, ""},
                          MeasureInput{smallMatmul(), {}, "syntax"}, MeasureInput{smallMatmul(), tiledMatmulSteps(), ""},
                          MeasureInput{smallMatmul(), {}, "lower_crash"}});
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[2].errorNo, MeasureErrorNo::CompileHostError);
  expectContains(r[2].errorMessage, "this is not C++");
  EXPECT_EQ(r[4].errorNo, MeasureErrorNo::InstantiationError);
  expectContains(r[4].errorMessage, "signal 11");
  for (int i : {0, 1, 3}) ASSERT_TRUE(r[size_t(i)].ok()) << i << ": " << r[size_t(i)].errorMessage;
  // The unit with the syntax error was compiled again without it; the other stayed shared.
  EXPECT_EQ(r[1].libraryPath, r[3].libraryPath);
  EXPECT_NE(r[0].libraryPath, r[1].libraryPath);
  EXPECT_NE(r[1].kernelName, r[3].kernelName);
  for (int i : {0, 1, 3}) {
    void* handle = dlopen(r[size_t(i)].libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    EXPECT_NE(dlsym(handle, r[size_t(i)].kernelName.c_str()), nullptr) << r[size_t(i)].kernelName;
    dlclose(handle);
  }
  // A shared library goes with the last candidate that uses it.
  builder.discard(r[1]);
  EXPECT_TRUE(std::filesystem::exists(r[3].libraryPath));
  builder.discard(r[3]);
  EXPECT_FALSE(std::filesystem::exists(r[3].libraryPath));
  builder.discard(r[0]);
  EXPECT_FALSE(std::filesystem::exists(r[0].libraryPath));
}

TEST(LocalBuilder, AnOversizedKernelFailsWithoutCompilingAndALargeOneCompilesAlone) {
  // The tiled matmul's function is a few KB: with the limits below it, it is too large to
  // build at all, and (shared builds) large enough to get a unit of its own.
  for (bool shared : {false, true}) {
    LocalBuilderOptions options;
    options.shareTranslationUnits = shared;
    options.maxSourceBytes = 100;
    LocalBuilder builder(options);
    auto start = std::chrono::steady_clock::now();
    auto r = builder.build({MeasureInput{smallMatmul(), tiledMatmulSteps(), ""}})[0];
    EXPECT_EQ(r.errorNo, MeasureErrorNo::InstantiationError) << r.errorMessage;
    expectContains(r.errorMessage, "MB of C++, more than the builder compiles");
    EXPECT_LT(secondsSince(start), 5.0);
  }
  LocalBuilderOptions options;
  options.nParallel = 1;
  options.sharedUnitMaxSourceBytes = 1000;  // every candidate compiles alone
  LocalBuilder builder(options);
  auto r = builder.build({MeasureInput{smallMatmul(), tiledMatmulSteps(), ""}, MeasureInput{smallMatmul(), tiledMatmulSteps(), ""}});
  ASSERT_TRUE(r[0].ok() && r[1].ok()) << r[0].errorMessage << r[1].errorMessage;
  EXPECT_NE(r[0].libraryPath, r[1].libraryPath);
  for (auto& b : r) builder.discard(b);
}

TEST(LocalBuilder, ASiblingThatCompilesTooLongDoesNotTimeOutTheOthersOfItsUnit) {
  // A compiler that hangs on the unit holding "hang" (the unit, then that candidate alone):
  // the unit times out, and each candidate compiled again alone gets a timeout of its own.
  TempDir dir("tessel-test-cc");
  std::string compiler = dir.path() + "/picky-cc";
  std::string real = codegen::CompileOptions{}.compiler;
  writeFile(compiler, "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.cpp) grep -q hang_here \"$a\" && exec sleep 30;; esac; done\nexec " +
                          real + " \"$@\"\n");
  std::filesystem::permissions(compiler, std::filesystem::perms::owner_all);
  LocalBuilderOptions options;
  options.nParallel = 1;
  options.timeout = std::chrono::milliseconds(3000);
  options.compileOptions = codegen::CompileOptions{};
  options.compileOptions->compiler = compiler;
  options.functionGenerator = [](const MeasureInput& input, const std::string& kernel) {
    auto f = LocalBuilder::generateFunction(input, kernel);
    if (input.config == "hang") f.text += "\n// hang_here\n";
    return f;
  };
  LocalBuilder builder(options);
  auto r = builder.build({MeasureInput{smallMatmul(), {}, "hang"}, MeasureInput{smallMatmul(), tiledMatmulSteps(), ""},
                          MeasureInput{smallMatmul(), {}, ""}});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].errorNo, MeasureErrorNo::BuildTimeoutError) << r[0].errorMessage;
  for (int i : {1, 2}) EXPECT_TRUE(r[size_t(i)].ok()) << i << ": " << r[size_t(i)].errorMessage;
  for (auto& b : r) builder.discard(b);
}
