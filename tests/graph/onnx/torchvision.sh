#!/usr/bin/env bash
# torchvision's networks exported to ONNX by the peer harness (bench/peers/export_models.py,
# seeded random weights, opset 13), compiled by tessel and run with `tessel run` on the
# exporter's input, against ONNX Runtime (compare_with_ort.js).
#
#   torchvision.sh [--export-only] TESSEL WORK_DIR NPM_DIR MODEL...
#
# tests/graph/CMakeLists.txt runs it once with --export-only (the ctest fixture that exports every
# model in one Python process: importing torch costs each process about 4 CPU-s) and then once
# per model (one ctest test each), in parallel: each model's export has its own directory under
# WORK_DIR, and npm_install.sh installs once. A model whose export is missing is exported here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export_only=0
if [ "${1:-}" = "--export-only" ]; then
  export_only=1
  shift
fi
(($# >= 4)) || { echo "usage: torchvision.sh [--export-only] TESSEL WORK_DIR NPM_DIR MODEL..." >&2; exit 2; }
tessel="$1"
work="$2"
npm_dir="$3"
shift 3
models=("$@")
# Exports are cached by the exporter (a model whose manifest matches is not exported again);
# the test reads the ONNX file and the input only, so the weights are not written beside it.
export_models() {
  /usr/bin/python3 -c 'import torch, torchvision, onnx' || {
    echo "FAIL: /usr/bin/python3 cannot import torch, torchvision and onnx (make deps installs python3-torch, python3-torchvision, python3-onnx)"
    exit 1
  }
  mkdir -p "$work"
  /usr/bin/python3 "$here/../../../bench/peers/export_models.py" --onnx-only --out "$work" "$@"
}
if ((export_only)); then
  export_models "${models[@]}"
  exit 0
fi
bash "$here/npm_install.sh" "$npm_dir" || exit $?
export NODE_PATH="$npm_dir/node_modules"
missing=()
for m in "${models[@]}"; do
  [ -f "$work/$m/manifest.json" ] && [ -f "$work/$m/model.onnx" ] || missing+=("$m")
done
((${#missing[@]} == 0)) || export_models "${missing[@]}"
for m in "${models[@]}"; do
  compiled="$("$tessel" compile --model "$work/$m/model.onnx" -o "$work/$m/tessel")" || exit 1
  echo "$compiled"
  # --force: the work directory, and the last run's output, stay in the build tree.
  "$tessel" run "$work/$m/tessel" --input "data=$work/$m/input.npy" --output "$work/$m/tessel_output.npy" --force >/dev/null
  # Winograd F(4x4) (points 0, +-1, +-2) rounds about ten times more than a direct convolution
  # in float32: inception_v3, with nine such layers, was 1.16e-4 off on an Intel Xeon (1.3e-5
  # with --winograd never); a build that has them is held to 2e-4.
  floor=1e-4
  grep -qE 'F\(4x4\): [1-9]' <<< "$compiled" && floor=2e-4
  node "$here/compare_with_ort.js" "$work/$m/model.onnx" "data=$work/$m/input.npy" "$work/$m/tessel_output.npy" "$floor"
done
