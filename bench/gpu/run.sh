#!/usr/bin/env bash
# GPU benchmark: batch-1 fp32 latency of resnet-18, resnet-50, mobilenet-v2 and the
# transformers BERT-base, GPT-2 small and ViT-B/16 (exported to ONNX by
# bench/peers/export_models.py from their torch.nn definitions) compiled by tessel untuned
# (default GPU schedules) on CUDA (replayed as a CUDA graph, and kernel by kernel) and OpenCL,
# and tuned on CUDA (the records of DIR/<model>.cuda.log: tuned here with BENCH_GPU_TRIALS
# trials per task, resuming the log), next to PyTorch on the same GPU (eager and CUDA graph,
# cuDNN, TF32 off; and a CUDA graph with TF32 allowed), all measured in this one run. Without a
# log, "tuned" is the records tessel ships for the GPU's architecture (records/cuda/). The
# transformers also tuned for `cuda -matmul-precision=tf32` (DIR/<model>.cuda.tf32.log), against
# PyTorch's TF32 figure (tf32/tf32: the goal of issue 40). Then per
# resnet-18 conv task the default and tuned GFLOP/s (bench_gpu_conv) next to cuDNN's on the same
# conv, the stride-1 3x3 ones also as Winograd (conv2d_nchw_winograd.cuda), and per matrix
# product of each transformer the fp32 and tensor-core tiles (bench_gpu_gemm). Prints
# `BENCH <name> <value> <unit>` lines and tables with tessel's time over PyTorch's best.
#
#   bench/gpu/run.sh [--out DIR] [models...]
#
# Environment: TESSEL (the tessel binary, default build/src/cli/tessel), BENCH_GPU_CONV and
# BENCH_GPU_GEMM (bench_gpu_conv, bench_gpu_gemm; default beside TESSEL's build), PYTHON (default python3),
# BENCH_GPU_REPEAT (measurements per figure, default 20), BENCH_GPU_TRIALS (trials per task
# when tuning, default 0: tune nothing, use the logs there are).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${BENCH_GPU_OUT:-build/bench-gpu}"
models=()
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
((${#models[@]})) || models=(resnet-18 resnet-50 mobilenet-v2 bert-base gpt2 vit-b16)
tessel="${TESSEL:-build/src/cli/tessel}"
py="${PYTHON:-python3}"
repeat="${BENCH_GPU_REPEAT:-20}"
trials="${BENCH_GPU_TRIALS:-0}"
conv_bench="${BENCH_GPU_CONV:-$(dirname "$tessel")/../../bench/gpu/bench_gpu_conv}"
gemm_bench="${BENCH_GPU_GEMM:-$(dirname "$tessel")/../../bench/gpu/bench_gpu_gemm}"
mkdir -p "$out"

# The transformers are not in tessel's zoo: exported once to ONNX (opset 17) and compiled from there.
transformers=()
for m in "${models[@]}"; do case "$m" in bert-base|gpt2|vit-b16) transformers+=("$m") ;; esac; done
if ((${#transformers[@]})); then
  "$py" "$here/../peers/export_models.py" --onnx-only --out "$out/peers" "${transformers[@]}" > "$out/export.log" 2>&1 ||
    echo "# exporting ${transformers[*]} failed: $(tail -1 "$out/export.log")"
fi
model_arg() {  # what --model takes for a network: its zoo name, or a transformer's exported file
  case "$1" in bert-base|gpt2|vit-b16) echo "$out/peers/$1/model.onnx" ;; *) echo "$1" ;; esac
}

echo "# $(date -u +%FT%TZ) on $(hostname): load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
"$tessel" query --device cuda 2>&1 | sed 's/^/# cuda: /'
"$tessel" query --device opencl --hardware device_name 2>&1 | sed 's/^/# opencl:0: /'

declare -A ms
mean_of() { sed -n 's/^Mean inference time (std dev): \([0-9.]*\) ms.*/\1/p' "$1" | tail -1; }
for m in "${models[@]}"; do
  for kind in cuda opencl; do
    log="$out/$m.$kind.compile.log"
    if ! "$tessel" compile --model "$(model_arg "$m")" --target "$kind" --no-shipped-records -o "$out/$m.$kind" > "$log" 2>&1; then
      echo "# $m: compile --target $kind failed: $(tail -1 "$log")"
      continue
    fi
    echo "# $(grep '^compiled' "$log")"
  done
  # Tuned: the log's records (tuning first, resumed, when trials are asked for); the
  # transformers also with TF32 allowed (-matmul-precision=tf32), as PyTorch's TF32 figure is.
  targets=(cuda)
  case "$m" in bert-base|gpt2|vit-b16) targets+=("cuda -matmul-precision=tf32") ;; esac
  for target in "${targets[@]}"; do
    name=cuda; [ "$target" = cuda ] || name=cuda.tf32
    log="$out/$m.$name.log"
    if ((trials > 0)); then
      "$tessel" tune --model "$(model_arg "$m")" --target "$target" --tuner xgb --n-trial "$trials" --early-stopping "$((trials / 2))" \
        --log "$log" --resume --no-evaluate > "$out/$m.$name.tune.log" 2>&1 || echo "# $m: tune failed: $(tail -1 "$out/$m.$name.tune.log")"
      grep -E '^(Tuned|tuned|Tuning)' "$out/$m.$name.tune.log" | tail -3 | sed 's/^/# /'
    fi
    # Without a log of this run's, the records tessel ships for the GPU's architecture.
    records=()
    [ -s "$log" ] && records=(--records "$log")
    if "$tessel" compile --model "$(model_arg "$m")" --target "$target" "${records[@]}" -o "$out/$m.$name.tuned" > "$out/$m.$name.tuned.compile.log" 2>&1; then
      grep -iE 'records' "$out/$m.$name.tuned.compile.log" | sed "s/^/# $m tuned ($target): /"
    else
      echo "# $m: the tuned compile for $target failed: $(tail -1 "$out/$m.$name.tuned.compile.log")"
    fi
  done
  for variant in cuda_graph cuda_kernels opencl tuned_cuda_graph tuned_tf32_cuda_graph; do
    case "$variant" in
      cuda_graph) dir="$out/$m.cuda"; flags=(--device cuda) ;;
      cuda_kernels) dir="$out/$m.cuda"; flags=(--device cuda --no-cuda-graph) ;;
      opencl) dir="$out/$m.opencl"; flags=(--device opencl) ;;
      tuned_cuda_graph) dir="$out/$m.cuda.tuned"; flags=(--device cuda) ;;
      tuned_tf32_cuda_graph) dir="$out/$m.cuda.tf32.tuned"; flags=(--device cuda) ;;
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
"$py" "$here/time_torch_gpu.py" --convs "${models[@]}" > "$torch_log" 2>&1 || echo "# PyTorch failed: $(tail -1 "$torch_log")"
grep '^#' "$torch_log"
declare -A cudnn
while read -r _ name value unit; do
  if [ "$unit" = ms ]; then ms["${name%_ms}"]=$value; else cudnn["${name#cudnn_conv_}"]=$value; fi
  echo "BENCH $name $value $unit"
done < <(grep '^BENCH' "$torch_log")

echo
ratio() {  # the first figure over the second, or n/a
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "n/a"; else printf "%.2fx", a / b }'
}
printf '%-14s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s\n' model "cuda graph" "cuda kernels" opencl "tuned" \
  "tuned tf32" "torch eager" "torch graph" "torch tf32" "untuned/torch" "tuned/torch" "tuned/tf32" "tf32/tf32"
for m in "${models[@]}"; do
  g=${ms["${m}_tessel_cuda_graph"]:-} k=${ms["${m}_tessel_cuda_kernels"]:-} o=${ms["${m}_tessel_opencl"]:-}
  u=${ms["${m}_tessel_tuned_cuda_graph"]:-} e=${ms["${m}_torch_eager"]:-} t=${ms["${m}_torch_graph"]:-}
  f=${ms["${m}_torch_tf32_graph"]:-} u32=${ms["${m}_tessel_tuned_tf32_cuda_graph"]:-}
  peer=$(awk -v c="$e" -v d="$t" 'BEGIN { p = c; if (d != "" && (p == "" || d + 0 < p + 0)) p = d; print p }')
  untuned=$(awk -v a="$g" -v b="$k" 'BEGIN { p = a; if (b != "" && (p == "" || b + 0 < p + 0)) p = b; print p }')
  printf '%-14s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s %12s\n' "$m" "${g:-n/a}" "${k:-n/a}" "${o:-n/a}" "${u:-n/a}" \
    "${u32:-n/a}" "${e:-n/a}" "${t:-n/a}" "${f:-n/a}" "$(ratio "$untuned" "$peer")" "$(ratio "$u" "$peer")" "$(ratio "$u" "$f")" \
    "$(ratio "$u32" "$f")"
done

# Per resnet-18 conv task: the default schedule and the log's records (or the shipped ones),
# next to cuDNN.
conv_records="$out/resnet-18.cuda.log"
[ -s "$conv_records" ] || conv_records="${BENCH_GPU_SHIPPED:-$here/../../records/cuda/sm_90.log}"
if [ -x "$conv_bench" ] && [ -s "$conv_records" ]; then
  echo
  "$conv_bench" --model resnet-18 --records "$conv_records" > "$out/resnet-18.conv.log" 2>&1 ||
    echo "# bench_gpu_conv failed: $(tail -1 "$out/resnet-18.conv.log")"
  printf '%-28s %-34s %10s %10s %10s %12s\n' task shape default tuned cuDNN tuned/cuDNN
  while read -r _ name value _; do
    case "$name" in *_tuned) ;; *) continue ;; esac
    key=$(sed -E 's/^gpu_conv_.*_(c[0-9]+_h[0-9]+_w[0-9]+_f[0-9]+_k[0-9]+_s[0-9]+_p[0-9]+)_tuned$/\1/' <<< "$name")
    task=$(sed -E "s/^gpu_conv_(.*)_${key}_tuned\$/\1/" <<< "$name")
    default=$(awk -v n="gpu_conv_${task}_${key}_default" '$2 == n { print $3 }' "$out/resnet-18.conv.log")
    peer=${cudnn[$key]:-}
    printf '%-28s %-34s %10s %10s %10s %12s\n' "$task" "$key" "$default" "$value" "${peer:-n/a}" "$(ratio "$value" "$peer")"
    echo "BENCH $name $value GFLOP/s"
  done < <(grep '^BENCH gpu_conv_' "$out/resnet-18.conv.log")
  # The stride-1 3x3 tasks as Winograd (conv2d_nchw_winograd.cuda, the tile size tuning measures;
  # GFLOP/s of the direct convolution's multiply-adds): their records, else the default schedule.
  "$conv_bench" --model resnet-18 --records "$conv_records" --winograd auto > "$out/resnet-18.wino.log" 2>&1 ||
    echo "# bench_gpu_conv --winograd failed: $(tail -1 "$out/resnet-18.wino.log")"
  while read -r _ name value _; do
    case "$name" in *_tuned) ;; *) continue ;; esac
    key=$(sed -E 's/^gpu_wino_.*_(c[0-9]+_h[0-9]+_w[0-9]+_f[0-9]+_k3_s1_p[0-9]+)_f[24]_tuned$/\1/' <<< "$name")
    tile=$(sed -E 's/^.*_(f[24])_tuned$/\1/' <<< "$name")
    task=$(sed -E "s/^gpu_wino_(.*)_${key}_${tile}_tuned\$/\1/" <<< "$name")
    default=$(awk -v n="gpu_wino_${task}_${key}_${tile}_default" '$2 == n { print $3 }' "$out/resnet-18.wino.log")
    peer=${cudnn[$key]:-}
    printf '%-28s %-34s %10s %10s %10s %12s\n' "$task ($tile)" "$key" "$default" "$value" "${peer:-n/a}" "$(ratio "$value" "$peer")"
    echo "BENCH $name $value GFLOP/s"
  done < <(grep '^BENCH gpu_wino_' "$out/resnet-18.wino.log")
fi
# Per matrix product of each transformer: the fp32 tile, its A/A control, the tensor-core tile in
# 3xTF32 and in TF32, timed in alternation (GFLOP/s).
if [ -x "$gemm_bench" ]; then
  for m in "${transformers[@]}"; do
    [ -s "$out/peers/$m/model.onnx" ] || continue
    echo
    if "$gemm_bench" --model "$out/peers/$m/model.onnx" > "$out/$m.gemm.log" 2>&1; then
      grep -vE '^BENCH' "$out/$m.gemm.log" | sed "s/^/# $m: /"
      grep '^BENCH' "$out/$m.gemm.log" | sed "s/^BENCH gpu_gemm_/BENCH gpu_gemm_${m}_/"
    else
      echo "# bench_gpu_gemm on $m failed: $(tail -1 "$out/$m.gemm.log")"
    fi
  done
fi
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
