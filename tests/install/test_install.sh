#!/usr/bin/env bash
# `make install` as a user's own program meets it, from outside the tree: the runtime installed
# into a prefix that is then moved (as DESTDIR staging or a board's image moves it), its headers
# checked to include the standard library and each other only, examples/deploy built with
# find_package(tessel), a one-file program built with `pkg-config --cflags --libs
# tessel-runtime`, both run on a module `tessel compile` made, their outputs compared with
# `tessel run`'s, and the installed tessel-rpc-server started.
#   test_install.sh BUILD_DIR SOURCE_DIR TESSEL
set -euo pipefail
build=$1 source=$2 tessel=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tessel-install-test.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/stage" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
mv "$work/stage" "$work/prefix"
prefix=$work/prefix
for f in include/tessel/runtime/GraphExecutor.h include/tessel/support/ErrorType.h lib/pkgconfig/tessel-runtime.pc \
         lib/cmake/tessel/tesselConfig.cmake lib/cmake/tessel/tesselConfigVersion.cmake lib/cmake/tessel/tesselTargets.cmake \
         bin/tessel-rpc-server bin/tessel-device-worker; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
ls "$prefix"/lib/libtessel-runtime.so.* > /dev/null || fail "the install has no libtessel-runtime.so.*"

# Every installed header includes only the C++ standard library (and the C headers KernelAbi.h,
# plain C, takes) and installed headers of tessel, and compiles on its own.
std_headers=" algorithm any array atomic bit bitset cassert cctype cerrno cfloat charconv chrono cinttypes climits cmath
  compare complex concepts condition_variable cstddef cstdint cstdio cstdlib cstring ctime deque exception filesystem
  functional initializer_list iomanip ios iosfwd iostream istream iterator limits list map memory mutex new numeric
  optional ostream random ranges ratio set shared_mutex span sstream stdexcept string string_view system_error thread
  tuple type_traits typeinfo unordered_map unordered_set utility variant vector stddef.h stdint.h "
headers=$(cd "$prefix/include/tessel" && find . -name '*.h' | sed 's|^\./||' | sort)
[ "$(echo "$headers" | wc -l)" -ge 10 ] || fail "only these headers were installed: $headers"
for h in $headers; do
  while read -r included; do
    case "$included" in
      \<*\>) name=${included:1:-1}
             [[ "$std_headers" == *" $name "* ]] || fail "installed header $h includes <$name>, which is not the standard library" ;;
      \"*\") name=${included:1:-1}
             [ -f "$prefix/include/tessel/$name" ] || fail "installed header $h includes \"$name\", which is not installed" ;;
      *) fail "installed header $h: cannot read the include $included" ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$prefix/include/tessel/$h")
  echo "#include \"$h\"" | c++ -std=c++20 -fsyntax-only -I "$prefix/include/tessel" -x c++ - \
    || fail "installed header $h does not compile on its own"
done

# A module, its input, and what `tessel run` makes of them.
models=$source/tests/graph/onnx/models/rgb_classifier
"$tessel" compile --model "$models/model.onnx" -o "$work/module" > "$work/compile.log" || { cat "$work/compile.log"; fail "tessel compile"; }
"$tessel" run "$work/module" --input "$models/input_image.npy" --output "$work/expected.npy" > "$work/run.log" \
  || { cat "$work/run.log"; fail "tessel run"; }
# The best class and its score (the rest of the top five are ties at 0, in no fixed order).
expected_top=$(sed -n 's/^  class *\([0-9]*\)  score \(.*\)$/class \1: \2/p' "$work/run.log" | head -1)
[ -n "$expected_top" ] || fail "tessel run printed no classes: $(cat "$work/run.log")"

# examples/deploy on its own, with find_package(tessel) and nothing of the tree.
cmake -S "$source/examples/deploy" -B "$work/deploy" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/deploy-configure.log" 2>&1 || { cat "$work/deploy-configure.log"; fail "examples/deploy: cmake configure"; }
cmake --build "$work/deploy" > "$work/deploy-build.log" 2>&1 || { cat "$work/deploy-build.log"; fail "examples/deploy: build"; }
grep -q -- "-I$source" "$work/deploy/CMakeFiles/tessel_deploy.dir/flags.make" && fail "examples/deploy compiled with the source tree's headers"
"$work/deploy/tessel_deploy" "$work/module" "$models/input_image.npy" > "$work/deploy.log" \
  || { cat "$work/deploy.log"; fail "the deploy example failed"; }
deploy_top=$(grep '^class ' "$work/deploy.log" | head -1)
[ "$deploy_top" = "$expected_top" ] || fail "the deploy example printed
$deploy_top
where tessel run printed
$expected_top"
grep -q '^Mean inference time (std dev): ' "$work/deploy.log" || fail "the deploy example printed no time: $(cat "$work/deploy.log")"

# A program of one file, compiled with what pkg-config says.
cat > "$work/one_file.cpp" <<'PROGRAM'
#include <cstdio>

#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"
#include "support/ErrorType.h"

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  try {
    auto executor = tessel::runtime::GraphExecutor::load(argv[1]);
    executor.setInput(0, tessel::runtime::loadNpy(argv[2]));
    executor.run();
    tessel::runtime::saveNpy(executor.getOutput(0), argv[3]);
  } catch (const tessel::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
PROGRAM
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs tessel-runtime) || fail "pkg-config does not know tessel-runtime"
[[ "$(pkg-config --modversion tessel-runtime)" == 0.* ]] || fail "tessel-runtime's version: $(pkg-config --modversion tessel-runtime)"
# shellcheck disable=SC2086
c++ -std=c++20 -O1 "$work/one_file.cpp" -o "$work/one_file" $flags || fail "the one-file program does not build with: $flags"
LD_LIBRARY_PATH=$prefix/lib "$work/one_file" "$work/module" "$models/input_image.npy" "$work/got.npy" \
  || fail "the one-file program failed"
cmp "$work/got.npy" "$work/expected.npy" || fail "the one-file program's output differs from tessel run's"
# Its errors are tessel's: a missing module is named.
if LD_LIBRARY_PATH=$prefix/lib "$work/one_file" "$work/nothing" "$models/input_image.npy" "$work/x.npy" 2> "$work/error.log"; then
  fail "the one-file program loaded a module that does not exist"
fi
grep -q "nothing/graph.json" "$work/error.log" || fail "the one-file program's error does not name the file: $(cat "$work/error.log")"

# The installed device server registers with a tracker and measures with the worker beside it.
"$prefix/bin/tessel-rpc-server" --version | grep -q '^tessel-rpc-server ' || fail "tessel-rpc-server --version"
wait_for() {  # wait_for TEXT FILE: up to 20 s
  for _ in $(seq 200); do grep -q "$1" "$2" && return 0; sleep 0.1; done
  fail "no '$1' in $2: $(cat "$2")"
}
"$tessel" tracker --port 0 > "$work/tracker.log" 2>&1 &
pids+=($!)
wait_for "bind to" "$work/tracker.log"
port=$(sed -n 's/^bind to .*:\([0-9]*\)$/\1/p' "$work/tracker.log")
"$prefix/bin/tessel-rpc-server" --tracker "127.0.0.1:$port" --key installed --port 0 > "$work/server.log" 2>&1 &
pids+=($!)
wait_for "registered with the tracker" "$work/server.log"
"$tessel" query --port "$port" --hardware installed > "$work/query.log" 2>&1 || fail "tessel query: $(cat "$work/query.log")"
grep -q "worker *$prefix/bin/tessel-device-worker\$" "$work/query.log" \
  || fail "the installed server does not measure with the worker beside it: $(cat "$work/query.log")"
echo "installed into a moved prefix; headers, find_package, pkg-config, deploy and the one-file program all good"
