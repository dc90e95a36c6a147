#!/usr/bin/env bash
# GPU benchmark: batch-1 fp32 latency of resnet-18, resnet-50 and mobilenet-v2 compiled by
# tessel untuned (default GPU schedules) on CUDA (replayed as a CUDA graph, and kernel by
# kernel) and OpenCL, next to PyTorch on the same GPU (eager and CUDA graph, cuDNN, TF32 off),
# all measured in this one run. Prints `BENCH <name> <value> <unit>` lines and a table with
# tessel's time over PyTorch's best.
#
#   bench/gpu/run.sh [--out DIR] [models...]
#
# Environment: TESSEL (the tessel binary, default build/src/cli/tessel), PYTHON (default
# python3), BENCH_GPU_REPEAT (measurements per figure, default 20).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${BENCH_GPU_OUT:-build/bench-gpu}"
models=()
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
((${#models[@]})) || models=(resnet-18 resnet-50 mobilenet-v2)
tessel="${TESSEL:-build/src/cli/tessel}"
py="${PYTHON:-python3}"
repeat="${BENCH_GPU_REPEAT:-20}"
mkdir -p "$out"

echo "# $(date -u +%FT%TZ) on $(hostname): load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
"$tessel" query --device cuda 2>&1 | sed 's/^/# cuda: /'
"$tessel" query --device opencl --hardware device_name 2>&1 | sed 's/^/# opencl:0: /'

declare -A ms
mean_of() { sed -n 's/^Mean inference time (std dev): \([0-9.]*\) ms.*/\1/p' "$1" | tail -1; }
for m in "${models[@]}"; do
  for kind in cuda opencl; do
    log="$out/$m.$kind.compile.log"
    if ! "$tessel" compile --model "$m" --target "$kind" -o "$out/$m.$kind" > "$log" 2>&1; then
      echo "# $m: compile --target $kind failed: $(tail -1 "$log")"
      continue
    fi
    echo "# $(grep '^compiled' "$log")"
  done
  for variant in cuda_graph cuda_kernels opencl; do
    case "$variant" in
      cuda_graph) dir="$out/$m.cuda"; flags=(--device cuda) ;;
      cuda_kernels) dir="$out/$m.cuda"; flags=(--device cuda --no-cuda-graph) ;;
      opencl) dir="$out/$m.opencl"; flags=(--device opencl) ;;
    esac
    [ -d "$dir" ] || continue
    log="$out/$m.$variant.bench.log"
    "$tessel" benchmark "$dir" "${flags[@]}" --repeat "$repeat" --min-repeat-ms 50 > "$log" 2>&1
    value=$(mean_of "$log")
    if [ -z "$value" ]; then
      echo "# $m $variant: $(tail -1 "$log")"
      continue
    fi
    grep '^device' "$log" | sed 's/^/# /'
    ms["${m}_tessel_$variant"]=$value
    echo "BENCH ${m}_tessel_${variant}_ms $value ms"
  done
done

torch_log="$out/torch.log"
"$py" "$here/time_torch_gpu.py" "${models[@]}" > "$torch_log" 2>&1 || echo "# PyTorch failed: $(tail -1 "$torch_log")"
grep '^#' "$torch_log"
while read -r _ name value _; do
  ms["${name%_ms}"]=$value
  echo "BENCH $name $value ms"
done < <(grep '^BENCH' "$torch_log")

echo
printf '%-14s %12s %12s %12s %12s %12s %14s\n' model "cuda graph" "cuda kernels" opencl "torch eager" "torch graph" "best/torch best"
for m in "${models[@]}"; do
  g=${ms["${m}_tessel_cuda_graph"]:-} k=${ms["${m}_tessel_cuda_kernels"]:-} o=${ms["${m}_tessel_opencl"]:-}
  e=${ms["${m}_torch_eager"]:-} t=${ms["${m}_torch_graph"]:-}
  ratio=$(awk -v a="$g" -v b="$k" -v c="$e" -v d="$t" 'BEGIN {
    best = a; if (b != "" && (best == "" || b + 0 < best + 0)) best = b
    peer = c; if (d != "" && (peer == "" || d + 0 < peer + 0)) peer = d
    if (best == "" || peer == "") print "n/a"; else printf "%.2fx", best / peer }')
  printf '%-14s %12s %12s %12s %12s %12s %14s\n' "$m" "${g:-n/a}" "${k:-n/a}" "${o:-n/a}" "${e:-n/a}" "${t:-n/a}" "$ratio"
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
