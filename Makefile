# tessel: the set-up commands are `make demo` (a user's first run) and `make test` (everything,
# what CI runs); `make check` is the few-minute loop after every change. The rest are pieces.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo -G Ninja)
# Each phase of demo, check and test leaves its wall time here; the command prints them at its end.
PHASES     := $(BUILD)/phase-times.txt
TIMED      := bash scripts/timed.sh $(PHASES)
# Builds only the named targets of the Release tree (and what they link).
BUILD_ONLY := cmake --build $(BUILD) -j $(JOBS) --target

.PHONY: all deps configure build build-tests build-integration-tests tools install build-asan check test test-release test-asan test-counts test-gpu gpu-test-bundle fuzz \
        demo bench-core bench-vta bench bench-models bench-tune bench-rpc bench-gpu phases-reset test-caches-reset clean

all: build

deps:
	@$(TIMED) deps bash scripts/install-deps.sh

# clang: the Release tree's test programs took 346 CPU-s against g++'s 431 (ccache off, 2-core Xeon
# VM), their tests about as long either way (914 and 878 CPU-s, one run each). The kernels tessel
# generates are compiled by gcc whatever built tessel (codegen/Toolchain.h).
$(BUILD)/CMakeCache.txt: | deps
	@$(TIMED) "release build" env CC=clang CXX=clang++ cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	@$(TIMED) "release build" cmake --build $(BUILD) -j $(JOBS)

# What the Release tests need: the test executables and the programs they run, not the benchmarks.
build-tests: configure
	@$(TIMED) "release build" $(BUILD_ONLY) test-programs

# The same for the tests not labelled core, which are all `make test` runs in the Release tree.
build-integration-tests: configure
	@$(TIMED) "release build" $(BUILD_ONLY) integration-test-programs

# `tessel` and the worker programs it starts: no test, no benchmark (the `tools` target).
tools: configure
	@$(TIMED) "build tessel" $(BUILD_ONLY) tools

# The runtime library, its headers, find_package(tessel) and pkg-config files, the runtime-only
# device server, `tessel` with its workers and the Python package (cmake/TesselInstall.cmake lists
# them) under PREFIX; DESTDIR=DIR stages them there instead (a package, a board's image).
PREFIX ?= /usr/local
install: configure
	@$(TIMED) "build" $(BUILD_ONLY) install-files
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

phases-reset:
	@rm -f $(PHASES)

# Every library, the unit tests labelled core and the libFuzzer harnesses of fuzz/, under
# AddressSanitizer and UBSan, built with clang (libFuzzer is clang's; clang also builds this
# tree about twice as fast as g++). -O1 -g1 (function names and lines in reports, no variable
# info) keeps the build inside CI's budget.
build-asan: deps
	@$(TIMED) "asan build" env CC=clang CXX=clang++ cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
	  -DTESSEL_SANITIZE=ON -DTESSEL_CORE_ONLY=ON -DTESSEL_FUZZ=ON
	@$(TIMED) "asan build" cmake --build $(ASAN_BUILD) -j $(JOBS)

# The compile caches of a test run, in the build tree: the kernels the tests compile through
# ccache (tests/kernel-cache/gcc), the OpenCL programs in PoCL's own cache (tessel keeps none
# beside a driver that caches its builds), NVRTC's cubins in tessel's. Tests that build the same
# kernel share one compiler run. `make test` starts them empty, as a fresh clone does (its
# figures are CI's), and the Release and sanitizer tests share them; `make check` keeps them
# from one run to the next.
TEST_CACHES := $(abspath $(BUILD))/test-caches
TEST_ENV    := PATH=$(CURDIR)/tests/kernel-cache:$$PATH TESSEL_KERNEL_CACHE=$(TEST_CACHES)/kernels \
               POCL_CACHE_DIR=$(TEST_CACHES)/pocl TESSEL_CUDA_CACHE=$(TEST_CACHES)/cuda
test-caches-reset:
	@rm -rf $(TEST_CACHES)

# The whole Release suite, long tests included (labels: see tests/CMakeLists.txt).
RELEASE_TESTS := $(TIMED) "release tests" env $(TEST_ENV) ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
test-release: build-tests
	@$(RELEASE_TESTS)

# Each fuzzer runs a few seconds here (TESSEL_FUZZ_SECONDS); `make fuzz` gives each a minute.
# Leaks inside libraries tessel does not build are suppressed by name (tests/lsan-suppressions.txt).
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan-suppressions.txt
ASAN_TESTS := $(TIMED) "asan tests" env $(TEST_ENV) $(ASAN_ENV) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -L core
test-asan: build-asan
	@$(ASAN_TESTS)

# How many tests each build runs in `make test`: the figures that must not go down when tests get
# faster (the Release tree's core tests are `make check`'s, and may not be built there).
test-counts:
	@release=0; asan=0; \
	if [ -d $(BUILD) ]; then release=$$(ctest --test-dir $(BUILD) -N -LE core | sed -n 's/^Total Tests: //p'); \
	  echo "  $(BUILD): $$release tests not labelled core, run there"; fi; \
	if [ -d $(ASAN_BUILD) ]; then asan=$$(ctest --test-dir $(ASAN_BUILD) -N -L core | sed -n 's/^Total Tests: //p'); \
	  echo "  $(ASAN_BUILD): $$asan core tests and fuzzers, run there"; fi; \
	echo "  every test once: $$((release + asan))"

# Everything, as CI runs it on a fresh clone; ends with the time of each phase and the test counts.
# Every test runs once: the libraries' unit tests (labelled core) under the sanitizers, which
# check more than the Release build does, the others (CLI, networks, processes) in the Release
# tree; `make check` runs the core tests in the Release tree too. The sanitizer build runs beside
# the Release tests at nice 19 (scripts/beside.sh): the tests keep about 1.6 of 2 cores busy (they
# wait on servers, timeouts and a last long test), and the build takes the rest; its output is in
# $(BUILD)/asan-build.log.
RELEASE_INTEGRATION_TESTS := $(TIMED) "release tests" env $(TEST_ENV) ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE core
test: phases-reset test-caches-reset build-integration-tests
	@bash scripts/beside.sh $(BUILD)/asan-build.log $(MAKE) --no-print-directory build-asan -- $(RELEASE_INTEGRATION_TESTS)
	@$(ASAN_TESTS)
	@bash scripts/timed.sh --report $(PHASES) "make test"
	@$(MAKE) --no-print-directory test-counts

# After every change (about 5 minutes on 2 cores from a built tree): every library's unit tests
# and the fast CLI tests, in the Release build; the tests labelled slow wait for `make test`.
check: phases-reset build-tests
	@$(TIMED) "check tests" env $(TEST_ENV) ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE slow
	@bash scripts/timed.sh --report $(PHASES) "make check"

# The GPU tests (their suites are named Gpu*) on a machine with an NVIDIA GPU: a missing CUDA
# device fails them instead of skipping (TESSEL_REQUIRE_CUDA=1). `make test` runs the same
# tests, the CUDA ones compiled with NVRTC and skipped without a GPU, the OpenCL ones on PoCL.
test-gpu: build
	cd $(BUILD) && TESSEL_REQUIRE_CUDA=1 ctest --output-on-failure -R '^Gpu'

# The same GPU tests for a GPU host without this build tree or its libraries (a rented H100):
# $(BUILD)/gpu-test-bundle.tar.xz, whose run-gpu-tests.sh runs them there.
gpu-test-bundle: build
	bash scripts/gpu-test-bundle.sh $(BUILD)

FUZZ_SECONDS ?= 60
fuzz: build-asan
	cd $(ASAN_BUILD) && TESSEL_FUZZ_SECONDS=$(FUZZ_SECONDS) $(ASAN_ENV) ctest --output-on-failure -L fuzz

# The main job on the local CPU: tune resnet-18's tasks with a small budget, build it with the
# best records, time it against the untuned build. A second run resumes from the same log.
# Builds `tessel` and its workers only, and prints how long the build and the run took.
DEMO_DIR ?= $(BUILD)/demo
DEMO_TRIALS ?= 24
demo: phases-reset tools
	@mkdir -p $(DEMO_DIR)
	@$(TIMED) "demo run" ./$(BUILD)/src/cli/tessel tune --model resnet-18 --target cpu --tuner xgb --n-trial $(DEMO_TRIALS) \
	  --early-stopping 16 --log $(DEMO_DIR)/resnet-18.cpu.log --resume -o $(DEMO_DIR)/resnet-18.tuned
	@bash scripts/timed.sh --report $(PHASES) "make demo"

# Each benchmark builds its own programs only (and `tessel` with its workers where it runs them),
# and ends with how long its build and its run took: $(call bench,TARGETS,COMMAND).
# BENCH_TARGET="cpu -mcpu=haswell" times code compiled for that target (oneDNN limited to its ISA).
define bench
	@$(TIMED) "build" $(BUILD_ONLY) $(1)
	@$(TIMED) "run" $(2)
	@bash scripts/timed.sh --report $(PHASES) "make $@"
endef
BENCH_TARGET ?=
TESSEL_ENV := TESSEL=./$(BUILD)/src/cli/tessel BENCH_TARGET="$(BENCH_TARGET)"

bench-core: phases-reset configure
	$(call bench,bench_core,env BENCH_TARGET="$(BENCH_TARGET)" ./$(BUILD)/bench/core/bench_core)

bench-vta: phases-reset configure
	$(call bench,bench_vta bench_vta_tasks,bash -c './$(BUILD)/bench/vta/bench_vta && ./$(BUILD)/bench/vta/bench_vta_tasks --records $(BUILD)/bench-vta-resnet-18.log')

# Candidates per second through a tracker with 1 and 3 loopback device servers; remote vs local cost.
bench-rpc: phases-reset configure
	$(call bench,bench_rpc,./$(BUILD)/bench/rpc/bench_rpc)

# On a machine with an NVIDIA GPU: resnet-18, resnet-50, mobilenet-v2 and the transformers
# BERT-base, GPT-2 and ViT-B/16 at batch 1, fp32, untuned, on CUDA (CUDA graph and kernel by
# kernel) and OpenCL, next to PyTorch (eager and CUDA graph, cuDNN, TF32 off; CUDA graph with
# TF32) measured in the same run; per conv task and per transformer product their GFLOP/s.
bench-gpu: phases-reset configure
	$(call bench,tools bench_gpu_conv bench_gpu_gemm,env $(TESSEL_ENV) BENCH_GPU_OUT=$(BUILD)/bench-gpu bash bench/gpu/run.sh $(MODELS))

# Batch-1 latency of the zoo networks in tessel, ONNX Runtime and PyTorch, one run (MODELS=... to
# pick, THREADS=N for every peer's thread count, default 2; BENCH_TARGET as for bench-core).
THREADS ?=
bench-models: phases-reset configure
	$(call bench,tools,env $(TESSEL_ENV) PEERS_OUT=$(BUILD)/peers bash bench/peers/run.sh $(if $(THREADS),--threads $(THREADS)) $(MODELS))

# Tuning end to end (bench/tune/run.sh): by default a size meant for 20 minutes on 2 cores, resnet-18 and
# mobilenet tuned with xgb at 8 trials per task vs untuned, ONNX Runtime and PyTorch; the
# auto-scheduler on resnet-18; resnet-18's convs (direct and Winograd) vs oneDNN; the busy-machine
# run; xgb/ga/random search efficiency to 64 trials. BENCH_TUNE_FULL=1: the long variant (four
# networks at 64 trials per task, the search to 512: over an hour); BENCH_TUNE_* in
# bench/tune/bench_tune.cpp pick any part and size. Logs in $(BUILD)/bench-tune.
BENCH_TUNE_FULL ?= 0
bench-tune: phases-reset configure
	$(call bench,tools bench_tune,env BENCH_TUNE_FULL=$(BENCH_TUNE_FULL) BENCH_TUNE_BIN=./$(BUILD)/bench/tune/bench_tune $(TESSEL_ENV) \
	  BENCH_TUNE_OUT=$(BUILD)/bench-tune PEERS_OUT=$(BUILD)/peers bash bench/tune/run.sh)

bench: bench-core bench-vta

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
