# tessel: the two set-up commands are `make demo` and `make test`; everything else is a piece of them.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo -G Ninja)

.PHONY: all deps build build-asan test test-release test-asan test-gpu gpu-test-bundle fuzz demo bench-core bench-vta bench bench-models bench-tune bench-rpc bench-gpu clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Every library, the unit tests labelled core and the libFuzzer harnesses of fuzz/, under
# AddressSanitizer and UBSan, built with clang (libFuzzer is clang's; clang also builds this
# tree about twice as fast as g++). -O1 -g1 (function names and lines in reports, no variable
# info) keeps the build inside CI's budget.
build-asan: deps
	CC=clang CXX=clang++ cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
	  -DTESSEL_SANITIZE=ON -DTESSEL_CORE_ONLY=ON -DTESSEL_FUZZ=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Each fuzzer runs a few seconds here (TESSEL_FUZZ_SECONDS); `make fuzz` gives each a minute.
test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -L core

test: test-release test-asan

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
	cd $(ASAN_BUILD) && TESSEL_FUZZ_SECONDS=$(FUZZ_SECONDS) ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -L fuzz

# The main job on the local CPU: tune resnet-18's tasks with a small budget, build it with the
# best records, time it against the untuned build. A second run resumes from the same log.
DEMO_DIR ?= $(BUILD)/demo
DEMO_TRIALS ?= 24
demo: build
	mkdir -p $(DEMO_DIR)
	./$(BUILD)/src/cli/tessel tune --model resnet-18 --target cpu --tuner xgb --n-trial $(DEMO_TRIALS) \
	  --early-stopping 16 --log $(DEMO_DIR)/resnet-18.cpu.log --resume -o $(DEMO_DIR)/resnet-18.tuned

# BENCH_TARGET="cpu -mcpu=haswell" times code compiled for that target (oneDNN limited to its ISA).
BENCH_TARGET ?=
bench-core: build
	BENCH_TARGET="$(BENCH_TARGET)" ./$(BUILD)/bench/core/bench_core

bench-vta: build
	./$(BUILD)/bench/vta/bench_vta
	./$(BUILD)/bench/vta/bench_vta_tasks --records $(BUILD)/bench-vta-resnet-18.log

# Candidates per second through a tracker with 1 and 3 loopback device servers; remote vs local cost.
bench-rpc: build
	cmake --build $(BUILD) -j $(JOBS) --target bench_rpc
	./$(BUILD)/bench/rpc/bench_rpc

# On a machine with an NVIDIA GPU: resnet-18, resnet-50 and mobilenet-v2 at batch 1, fp32,
# untuned, on CUDA (CUDA graph and kernel by kernel) and OpenCL, next to PyTorch (eager and CUDA
# graph, cuDNN, TF32 off) measured in the same run.
bench-gpu: build
	TESSEL=./$(BUILD)/src/cli/tessel BENCH_GPU_OUT=$(BUILD)/bench-gpu bash bench/gpu/run.sh $(MODELS)

# Batch-1 latency of the zoo networks in tessel, ONNX Runtime and PyTorch, one run (MODELS=... to
# pick, THREADS=N for every peer's thread count, default 2; BENCH_TARGET as for bench-core).
THREADS ?=
bench-models: build
	BENCH_TARGET="$(BENCH_TARGET)" TESSEL=./$(BUILD)/src/cli/tessel PEERS_OUT=$(BUILD)/peers bash bench/peers/run.sh \
	  $(if $(THREADS),--threads $(THREADS)) $(MODELS)

# Tuning end to end: resnet-18, resnet-50, mobilenet and mobilenet-v2 tuned with xgb
# (BENCH_TUNE_TRIALS per task, default 64) vs untuned, ONNX Runtime and PyTorch; resnet-18's
# convs (direct and Winograd) vs oneDNN; xgb/ga/random search
# efficiency. Long (BENCH_TUNE_* in bench/tune/bench_tune.cpp shorten it); logs in $(BUILD)/bench-tune.
bench-tune: build
	BENCH_TUNE_BIN=./$(BUILD)/bench/tune/bench_tune TESSEL=./$(BUILD)/src/cli/tessel BENCH_TUNE_OUT=$(BUILD)/bench-tune \
	  PEERS_OUT=$(BUILD)/peers bash bench/tune/run.sh

bench: bench-core bench-vta

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
