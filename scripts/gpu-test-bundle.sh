#!/usr/bin/env bash
# Packs the GPU tests of a build tree into one folder that runs on another machine: a GPU host
# that has the NVIDIA driver (and CUDA's NVRTC) but not this machine's libraries or build tree,
# such as a rented H100. `make test-gpu` runs the same tests where the build tree is.
#
#   scripts/gpu-test-bundle.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, BUILD_DIR/gpu-test-bundle)
#
# OUT_DIR gets every test program of the tree that has a suite named Gpu* (stripped), the
# `tessel` program and its measurement worker beside them (the tests and the runner look there
# first: tests/common/TesselCli.h, tune/LocalRunner.h, rpc/DeviceServer.cpp), the shared libraries they load from
# outside the C and C++ runtimes (which the host's newer ones replace), and run-gpu-tests.sh,
# which runs each program's Gpu* suites with a missing CUDA device as a failure, not a skip,
# and env.sh, which points a shell there at the bundle's programs (TESSEL, BENCH_GPU_CONV,
# the library path), so that the checkout's bench/gpu/run.sh runs `make bench-gpu`'s figures:
#   source OUT_DIR/env.sh && bash bench/gpu/run.sh
# Also OUT_DIR.tar.xz, the same folder as one file to copy.
set -euo pipefail
build="${1:-build}"
out="${2:-$build/gpu-test-bundle}"
[ -x "$build/src/cli/tessel" ] || { echo "gpu-test-bundle: no $build/src/cli/tessel: build first (make build)" >&2; exit 1; }
worker="$(find "$build/src" -name tessel-measure-worker -type f -perm -u+x | head -n 1)"
[ -n "$worker" ] || { echo "gpu-test-bundle: no tessel-measure-worker under $build/src" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/lib"
programs=("$build/src/cli/tessel" "$worker")
# A device server started by the tests measures whole modules with tessel-device-worker.
[ -x "$build/src/rpc/tessel-device-worker" ] && programs+=("$build/src/rpc/tessel-device-worker")
[ -x "$build/bench/gpu/bench_gpu_conv" ] && programs+=("$build/bench/gpu/bench_gpu_conv")
[ -x "$build/bench/gpu/bench_gpu_gemm" ] && programs+=("$build/bench/gpu/bench_gpu_gemm")
suites=()
while IFS= read -r exe; do
  listed="$("$exe" --gtest_list_tests 2>/dev/null | grep -E '^Gpu[A-Za-z0-9_]*\.$' || true)"
  [ -n "$listed" ] || continue
  programs+=("$exe")
  suites+=("$(basename "$exe"): $(echo "$listed" | tr -d '.' | tr '\n' ' ')")
done < <(find "$build/tests" -type f -name 'test_*' -perm -u+x | sort)
[ ${#suites[@]} -gt 0 ] || { echo "gpu-test-bundle: no test program under $build/tests has a Gpu* suite" >&2; exit 1; }

for p in "${programs[@]}"; do
  cp "$p" "$out/"
  strip --strip-unneeded "$out/$(basename "$p")"
done
# The libraries the programs load, but for the C runtime, the C++ runtime and libgcc: a newer
# host's own versions of those run what this machine built, while an older copy put first on
# the library path would break the host's CUDA and OpenCL drivers.
for p in "${programs[@]}"; do
  ldd "$p" | awk '/=> \// { print $3 }'
done | sort -u | while IFS= read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libgomp.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done

cat >"$out/env.sh" <<'EOF'
# Sourced: the bundle's programs and libraries for this shell (scripts/gpu-test-bundle.sh).
bundle="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The workers need no variable: tessel and the tests look for them beside themselves first.
export TESSEL="$bundle/tessel" TESSEL_CLI="$bundle/tessel"
[ -x "$bundle/bench_gpu_conv" ] && export BENCH_GPU_CONV="$bundle/bench_gpu_conv"
[ -x "$bundle/bench_gpu_gemm" ] && export BENCH_GPU_GEMM="$bundle/bench_gpu_gemm"
EOF
cat >"$out/run-gpu-tests.sh" <<'EOF'
#!/usr/bin/env bash
# Runs the Gpu* suites of every test program in this folder (made by scripts/gpu-test-bundle.sh).
# A missing CUDA device fails the CUDA tests here (TESSEL_REQUIRE_CUDA=1), as `make test-gpu`
# does; TESSEL_REQUIRE_CUDA=0 lets them skip. Extra arguments go to every program (e.g.
# --gtest_filter=GpuTemplates.*). Exit status: the number of programs with a failure.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
export TESSEL_REQUIRE_CUDA="${TESSEL_REQUIRE_CUDA:-1}"
failed=0
for exe in "$bundle"/test_*; do
  echo "== $(basename "$exe")"
  "$exe" --gtest_filter='Gpu*' --gtest_brief=1 "$@" || { failed=$((failed + 1)); echo "== $(basename "$exe"): FAILED"; }
done
echo "== $failed program(s) with failures"
exit "$failed"
EOF
chmod +x "$out/run-gpu-tests.sh"
printf '%s\n' "${suites[@]}" >"$out/SUITES"
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
echo "gpu-test-bundle: $out ($(du -sh "$out" | cut -f1)), $out.tar.xz ($(du -h "$out.tar.xz" | cut -f1)); suites:"
sed 's/^/  /' "$out/SUITES"
