#!/usr/bin/env bash
# Networks exported to ONNX by the peer harness (bench/peers/export_models.py, seeded random
# weights: torchvision's at opset 13, the transformers at 17), compiled by tessel and run with
# `tessel run` on the exporter's input (images, or token ids), against ONNX Runtime
# (compare_with_ort.js).
#
#   peer_exports.sh [--export-only] [--layers N] [--opencl] [--zoo] TESSEL WORK_DIR NPM_DIR MODEL...
#
# --layers N exports the transformers with N layers of their full width and sequence (every
# kernel of the 12-layer network, at its shapes, in N twelfths of the export's time and size).
# --opencl builds for the first OpenCL device and runs there (PoCL on a machine without a GPU):
# the default GPU schedule's kernels, checked the same way.
# --zoo also builds each model from tessel's zoo with the export's weights (its tessel params
# file, which the export then writes) and checks it against ONNX Runtime on the export: the zoo's
# network is the very function of the exporter's definition.
#
# tests/graph/CMakeLists.txt runs it once with --export-only (the ctest fixture that exports every
# model in one Python process: importing torch costs each process about 4 CPU-s) and then once
# per model (one ctest test each), in parallel: each model's export has its own directory under
# WORK_DIR, and npm_install.sh installs once. A model whose export is missing is exported here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export_only=0
export_args=()
opencl=0 zoo=0 layers=()
while (($#)); do
  case "$1" in
    --export-only) export_only=1; shift ;;
    --layers) export_args+=(--layers "$2"); layers=(--layers "$2"); shift 2 ;;
    --opencl) opencl=1; shift ;;
    --zoo) zoo=1; export_args+=(--tessel-params); shift ;;
    *) break ;;
  esac
done
(($# >= 4)) || { echo "usage: peer_exports.sh [--export-only] [--layers N] [--opencl] [--zoo] TESSEL WORK_DIR NPM_DIR MODEL..." >&2; exit 2; }
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
  /usr/bin/python3 "$here/../../../bench/peers/export_models.py" --onnx-only ${export_args[@]+"${export_args[@]}"} --out "$work" "$@"
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
  ((zoo == 0)) || [ -f "$work/$m/tessel_nchw.params" ] || missing+=("$m")
done
((${#missing[@]} == 0)) || export_models "${missing[@]}"
for m in "${models[@]}"; do
  build="$work/$m/tessel" device=()
  if ((opencl)); then
    build="$work/$m/tessel-opencl" device=(--device opencl)
    compiled="$("$tessel" compile --model "$work/$m/model.onnx" --target opencl -o "$build")" || exit 1
  else
    compiled="$("$tessel" compile --model "$work/$m/model.onnx" -o "$build")" || exit 1
  fi
  echo "$compiled"
  # --force: the work directory, and the last run's output, stay in the build tree.
  input_name="$(node -e 'console.log(require(process.argv[1]).input_name)' "$work/$m/manifest.json")"
  "$tessel" run "$build" ${device[@]+"${device[@]}"} --input "$input_name=$work/$m/input.npy" --output "$build.npy" --force >/dev/null
  # Winograd F(4x4) (points 0, +-1, +-2) rounds about ten times more than a direct convolution
  # in float32: inception_v3, with nine such layers, was 1.16e-4 off on an Intel Xeon (1.3e-5
  # with --winograd never); a build that has them is held to 2e-4.
  floor=1e-4
  grep -qE 'F\(4x4\): [1-9]' <<< "$compiled" && floor=2e-4
  node "$here/compare_with_ort.js" "$work/$m/model.onnx" "$input_name=$work/$m/input.npy" "$build.npy" "$floor"
  if ((zoo)); then
    "$tessel" compile --model "$m" ${layers[@]+"${layers[@]}"} --params "$work/$m/tessel_nchw.params" -o "$work/$m/tessel-zoo" | tail -1 || exit 1
    "$tessel" run "$work/$m/tessel-zoo" --input "$input_name=$work/$m/input.npy" --output "$work/$m/tessel-zoo.npy" --force >/dev/null
    echo "the zoo's $m with the export's weights:"
    node "$here/compare_with_ort.js" "$work/$m/model.onnx" "$input_name=$work/$m/input.npy" "$work/$m/tessel-zoo.npy" "$floor"
  fi
done
