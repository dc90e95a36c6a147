#!/usr/bin/env bash
# tessel itself as `make install` leaves it, used from a prefix that is then moved: the `tessel`
# command compiles and runs a zoo network and tunes a small ONNX model with the workers installed
# beside it; the Python package, imported from the installed dist-packages, builds and runs a model
# and tunes a task with the installed worker; `tessel records plot` draws the tuning log with the
# installed drawing code. None of these may use the build tree: an installed copy never looks
# there (support/HelperPrograms.h), so anything not installed fails here.
#   test_installed_tessel.sh BUILD_DIR SOURCE_DIR PYTHON
set -euo pipefail
build=$1 source=$2 python=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tessel-installed-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Run from the work directory, with no variable of the build's (ctest's or the caller's) that
# names a worker, a Python or a package directory.
cd "$work"
unset TESSEL_MEASURE_WORKER TESSEL_DEVICE_WORKER TESSEL_VTA_WORKER TESSEL_PYTHON TESSEL_CLI PYTHONPATH

cmake --install "$build" --prefix "$work/stage" > install.log || { cat install.log; fail "cmake --install"; }
mv "$work/stage" "$work/prefix"
prefix=$work/prefix
bin=$prefix/bin
package_dirs=("$prefix"/lib/python3*/dist-packages)
[ ${#package_dirs[@]} -eq 1 ] && [ -d "${package_dirs[0]}" ] || fail "the install has no one lib/python3.X/dist-packages: ${package_dirs[*]}"
dist_packages=${package_dirs[0]}
for f in "$bin/tessel" "$bin/tessel-measure-worker" "$bin/tessel-device-worker" "$bin/tessel-vta-worker" \
         "$dist_packages/tessel/__init__.py" "$dist_packages/tessel/records_plot.py" "$dist_packages/tessel/autotvm/__init__.py"; do
  [ -e "$f" ] || fail "the install has no ${f#"$prefix"/}"
done
extensions=("$dist_packages"/tessel/_tessel*.so)
[ -f "${extensions[0]}" ] || fail "the install has no ${dist_packages#"$prefix"/}/tessel/_tessel*.so"

# The installed binaries load their libraries with no path into the build tree.
for f in "$bin"/* "${extensions[0]}" "$prefix"/lib/libtessel-runtime.so.*.*; do
  if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then fail "$f has an RPATH into the build tree"; fi
  if ldd "$f" | grep -q 'not found'; then fail "$f: a library is not found: $(ldd "$f" | grep 'not found')"; fi
done

# `tessel compile` and `tessel run` of a zoo network.
"$bin/tessel" compile --model resnet-18 --image-size 32 -o r18 > compile.log 2>&1 || { cat compile.log; fail "the installed tessel compile"; }
"$bin/tessel" run r18 > run.log 2>&1 || { cat run.log; fail "the installed tessel run"; }
grep -q '^  class  *[0-9]*  score ' run.log || fail "the installed tessel run printed no classes: $(cat run.log)"

# `tessel tune` of a small model: its candidates measured by the worker beside the installed tessel.
models=$source/tests/graph/onnx/models
"$bin/tessel" tune --model "$models/conv_bn_relu/model.onnx" --n-trial 2 --log tune.log --no-evaluate > tune.out 2>&1 \
  || { cat tune.out; fail "the installed tessel tune"; }
[ "$(grep -c '"error_no":0' tune.log)" -ge 1 ] || fail "the installed tessel tune measured no valid candidate: $(head -c 2000 tune.log)"

# The Python package from the installed dist-packages: the installed copy is the one imported, it
# builds and runs a model (compared with the ONNX file's reference output) and tunes a task with
# the installed worker.
cat > use_package.py <<'SCRIPT'
import os
import sys

import numpy as np

import tessel
from tessel import autotvm, runtime

dist_packages, models, log = sys.argv[1:]
installed = os.path.realpath(os.path.join(dist_packages, "tessel"))
for imported in (tessel.__file__, tessel._tessel.__file__):
    if os.path.dirname(os.path.realpath(imported)) != installed:
        sys.exit(f"imported {imported}, not the installed package in {installed}")

model = tessel.onnx.load(os.path.join(models, "conv_bn_relu", "model.onnx"))
graph = runtime.GraphModule(tessel.build(model, target="cpu"), tessel.cpu(0))
graph.set_input("x", np.load(os.path.join(models, "conv_bn_relu", "input_x.npy")))
graph.run()
np.testing.assert_allclose(graph.get_output(0), np.load(os.path.join(models, "conv_bn_relu", "output_0.npy")),
                           rtol=1e-4, atol=1e-5)

task = min(autotvm.extract_from_program(model, target="cpu"), key=lambda t: t.flops)
measure = autotvm.measure_option(builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner(number=1, repeat=1))
outcome = autotvm.tuner.RandomTuner(task, seed=1).tune(n_trial=2, measure_option=measure, callbacks=[autotvm.callback.log_to_file(log)])
if outcome.trials != 2:
    sys.exit(f"tuning ran {outcome.trials} trials, not 2")
print("the installed package built, ran and tuned")
SCRIPT
PYTHONPATH=$dist_packages "$python" use_package.py "$dist_packages" "$models" python-tune.log > python.log 2>&1 \
  || { cat python.log; fail "the installed Python package"; }
grep -q '"error_no":0' python-tune.log || fail "tuning from the installed package measured no valid candidate: $(head -c 2000 python-tune.log)"

# `tessel records plot` of the tuning log: the installed drawing code writes an SVG with a curve
# per task and the estimated latency.
"$bin/tessel" records plot tune.log -o tune.svg > plot.log 2>&1 || { cat plot.log; fail "the installed tessel records plot"; }
tasks=$(grep -o '"workload_key":"[^"]*"' tune.log | sort -u | wc -l)
[ "$tasks" -ge 1 ] || fail "the tuning log names no task"
for id in $(seq -f 'task-%g' 1 "$tasks") network-latency; do
  grep -q "<g id=\"$id\"" tune.svg || fail "the SVG of tessel records plot has no curve $id"
done
# Without the installed drawing code, the command says so and does not reach into the build tree.
mv "$dist_packages/tessel/records_plot.py" "$work/moved_records_plot.py"
if "$bin/tessel" records plot tune.log -o again.svg > noplot.log 2>&1; then fail "tessel records plot drew without the installed drawing code"; fi
grep -qF "records_plot.py) is missing (tried $dist_packages/tessel/records_plot.py)" noplot.log \
  || fail "tessel records plot without its drawing code said: $(cat noplot.log)"
echo "installed tessel, its workers and the Python package work from a moved prefix"
