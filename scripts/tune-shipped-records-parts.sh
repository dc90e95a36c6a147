#!/usr/bin/env bash
# scripts/tune-shipped-records.sh as eight 2-core parts side by side on a 16-core machine (each
# pinned to its cores with taskset, so each part's records say 2 cores), for the device tool's
# host: its command may run 10 minutes and bring back at most 8 files from $OUT. The parts' logs
# stay in WORK (outside $OUT); $OUT gets the best record of each workload (best.log, for
# records/), the parts' logs as one parts-logs.tar.xz (given back as RESUME, a next call
# continues them) and the parts' output, compressed.
#
#   OUT=DIR TESSEL=tessel scripts/tune-shipped-records-parts.sh [--seconds S] [--target T]
#       [--trials N] [--early-stopping N] [--assets DIR] [--resume parts-logs.tar.xz] [--work WORK]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
secs=540 target="cpu -mcpu=haswell" trials=48 stop=16 assets="" resume="" work=/tmp/shipped-parts
while (($#)); do
  case "$1" in
    --seconds) secs="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    --trials) trials="$2"; shift 2 ;;
    --early-stopping) stop="$2"; shift 2 ;;
    --assets) assets="$2"; shift 2 ;;
    --resume) resume="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "tune-shipped-records-parts.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
: "${OUT:?set OUT to the folder whose files come back}"
tessel="${TESSEL:-$root/build/src/cli/tessel}"
# Networks that share workloads go to one part (resnet-18/34, the bottleneck resnets, the vggs).
groups=("resnet-18 resnet-34 mobilenet" "resnet-50 resnet-101 resnet-152" "vgg-11 vgg-13 vgg-16 vgg-19"
        "mobilenet-v2 squeezenet_v1.1" "squeezenet_v1.0" "inception_v3" "ppocr-det" "ppocr-cls")
(( $(nproc) >= 2 * ${#groups[@]} )) || { echo "tune-shipped-records-parts.sh: needs $((2 * ${#groups[@]})) cores, this machine has $(nproc)" >&2; exit 1; }
mkdir -p "$work" "$OUT"
[ -n "$resume" ] && (cd "$work" && xz -dc "$resume" | tar xf -) && echo "resuming $(cat "$work"/part*/all.log | wc -l) records"
extra=()
[ -n "$assets" ] && extra=(--assets "$assets")
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $secs s per part"
for i in "${!groups[@]}"; do
  mkdir -p "$work/part$i"
  TESSEL="$tessel" timeout "$secs" taskset -c $((2 * i)),$((2 * i + 1)) bash scripts/tune-shipped-records.sh --trials "$trials" \
    --early-stopping "$stop" --work "$work/part$i" --target "$target" --models "${groups[$i]}" "${extra[@]}" --no-best \
    > "$work/part$i.txt" 2>&1 &
done
wait || true
for i in "${!groups[@]}"; do
  echo "== part$i (${groups[$i]}): $(cat "$work/part$i/all.log" 2>/dev/null | wc -l) records, $(grep -c '^== ' "$work/part$i.txt") networks started"
  tail -n 2 "$work/part$i.txt"
done | tee "$OUT/summary.txt"
cat "$work"/part*/all.log > "$work/all.log"
"$tessel" records best "$work/all.log" -o "$OUT/best.log" --force | tee -a "$OUT/summary.txt"
cat "$work"/part*.txt | xz -2 -T0 > "$OUT/parts-output.txt.xz"
(cd "$work" && tar cf - part*/all.log | xz -2 -T0 > "$OUT/parts-logs.tar.xz")
