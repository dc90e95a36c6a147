#!/usr/bin/env bash
# `make bench-tune`: tuning end to end on the local CPU, all figures from this one run.
#   1. bench_tune: tunes the networks with `tessel tune` (resnet-18, resnet-50, mobilenet,
#      mobilenet-v2; xgb,
#      BENCH_TUNE_TRIALS per task): trials per second and where a trial's time goes, tuned and
#      untuned latency; compares resnet-18's convs with oneDNN warm and cold; tunes resnet-18
#      again with a CPU-bound program on one core (busy_tuned_vs_untuned); measures the search
#      efficiency of xgb / ga / random (see bench_tune.cpp for every BENCH_TUNE_* knob).
#   2. the peers: per network, bench/peers/run.sh times ONNX Runtime, PyTorch and tessel's
#      untuned build on the same network, then the tuned modules bench_tune left (template and
#      auto-scheduled) are timed with the same harness (bench/peers/tessel_runs.sh: single
#      runs, their median, as the peers are timed), right after, in BENCH_TUNE_ROUNDS (5; 7 long)
#      rounds alternating with ONNX Runtime; the ratios are of the rounds' medians.
#
#   bench/tune/run.sh            (environment: BENCH_TUNE_*, BENCH_TUNE_BIN, TESSEL, PEERS_OUT)
#
# By default every part runs at a reduced size meant to end within 20 minutes on 2 cores (one
# run of each figure the issues ask for): resnet-18 and mobilenet at 8 trials per task, the auto-scheduler
# on resnet-18, 7 rounds per conv, the search to 64 trials on two convs with two seeds, 5 rounds
# against the peers. BENCH_TUNE_FULL=1 runs the long variant (all four networks at 64 trials per
# task, the search to 512 trials on three convs with three seeds, 21 and 7 rounds: over an hour);
# any BENCH_TUNE_* set in the environment wins over either.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

if [ "${BENCH_TUNE_FULL:-0}" != 1 ]; then
  export BENCH_TUNE_MODELS="${BENCH_TUNE_MODELS:-resnet-18,mobilenet}" BENCH_TUNE_TRIALS="${BENCH_TUNE_TRIALS:-8}"
  export BENCH_TUNE_AUTO_MODELS="${BENCH_TUNE_AUTO_MODELS:-resnet-18}" BENCH_TUNE_AUTO_CHECKPOINTS="${BENCH_TUNE_AUTO_CHECKPOINTS:-50,100}"
  export BENCH_TUNE_CONV_ROUNDS="${BENCH_TUNE_CONV_ROUNDS:-7}" BENCH_TUNE_INTERLEAVED_ROUNDS="${BENCH_TUNE_INTERLEAVED_ROUNDS:-60}"
  export BENCH_TUNE_CHECKPOINTS="${BENCH_TUNE_CHECKPOINTS:-32,64}" BENCH_TUNE_SEEDS="${BENCH_TUNE_SEEDS:-2}"
  export BENCH_TUNE_SEARCH_CONVS="${BENCH_TUNE_SEARCH_CONVS:-56:64:64:3:1,7:512:512:3:1}" BENCH_TUNE_ROUNDS="${BENCH_TUNE_ROUNDS:-5}"
fi
bench_bin="${BENCH_TUNE_BIN:-build/bench/tune/bench_tune}"
tessel="${TESSEL:-build/src/cli/tessel}"
out="${BENCH_TUNE_OUT:-build/bench-tune}"
export BENCH_TUNE_OUT="$out"
models="${BENCH_TUNE_MODELS:-resnet-18,resnet-50,mobilenet,mobilenet-v2}"
mkdir -p "$out"

# On a busy machine, OpenMP threads that spin while they wait hold a core that a preempted
# sibling needs: resnet-18 then ran in 413 ms instead of 24 ms. Every party (the tuner's
# measurements, oneDNN, the peers, tessel benchmark) waits passively then, the same rule
# bench/peers/run.sh applies to the peers (PEERS_NO_SPIN=0/1 to force either way). The peers'
# own check runs again after the tuning, on the machine as it is then.
# shellcheck source=../busy_cores.sh
source "$here/../busy_cores.sh"
busy="$(busy_cores)"
if [ "${PEERS_NO_SPIN:-}" = 1 ] || { [ "${PEERS_NO_SPIN:-}" != 0 ] &&
     awk -v b="$busy" 'BEGIN { exit !(b >= 1) }'; }; then
  export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}" PEERS_NO_SPIN=1
  echo "# busy machine (other programs keep $busy cores busy): every OpenMP pool waits passively (OMP_WAIT_POLICY=$OMP_WAIT_POLICY)"
fi
export TESSEL_NUM_THREADS="${TESSEL_NUM_THREADS:-2}"

# The parts run in this order: networks and convs, then the peers on the tuned networks, then
# the long search-efficiency part, so the network figures come first.
parts=",${BENCH_TUNE_PARTS:-networks,auto,convs,busy,search},"
has() { [[ "$parts" == *",$1,"* ]]; }
run_bench() {  # PARTS
  # tessel chooses its own kernel threads from the free cores (the busy part depends on it);
  # the fixed TESSEL_NUM_THREADS is for the peers' comparison below.
  env -u TESSEL_NUM_THREADS BENCH_TUNE_PARTS="$1" "$bench_bin" 2>&1 | tee -a "$out/bench_tune.out"
  local rc=${PIPESTATUS[0]}
  ((rc == 0)) || { echo "run.sh: bench_tune failed ($rc)" >&2; exit "$rc"; }
}
start=$(date +%s)
: >"$out/bench_tune.out"
first=""
has networks && first="networks"
has auto && first="${first:+$first,}auto"
has convs && first="${first:+$first,}convs"
has busy && first="${first:+$first,}busy"
[ -n "$first" ] && run_bench "$first"

install=(--no-install)
if [ ! -f bench/peers/node_modules/onnxruntime-node/package.json ] ||
   ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  install=()  # let the peer harness install what is missing
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "nan" }'; }
value() { sed -n "s/^BENCH $1 \([^ ]*\) .*/\1/p" <<<"$2" | tail -1; }

summary=()
failed=0
rounds="${BENCH_TUNE_ROUNDS:-7}"
peers_out="${PEERS_OUT:-build/peers}"
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# The median of the rounds' ratios A[i] / B[i] (arrays named A and B, one entry per round):
# the paired figure, in which the machine's speed during a round cancels out. Fails when a
# round is missing from either.
paired_ratio() {
  local -n a="$1" b="$2"
  ((${#a[@]} > 0 && ${#a[@]} == ${#b[@]})) || return 1
  local i r=()
  for ((i = 0; i < ${#a[@]}; ++i)); do r+=("$(ratio "${a[i]}" "${b[i]}")"); done
  median "${r[@]}"
}
# shellcheck source=../peers/tessel_runs.sh
source "$root/bench/peers/tessel_runs.sh"
time_module() {  # DIR -> the median ms of single runs, as the peers are timed
  tessel_median_ms "$tessel" "$1" "$1.timings.log"
}
has networks || has auto || models=""  # the peers are only timed for networks this run tuned
for m in ${models//,/ }; do
  echo
  echo "== $m: ONNX Runtime, PyTorch and tessel (untuned, then tuned) on the same network =="
  peers="$(TESSEL="$tessel" bash bench/peers/run.sh "${install[@]}" "$m" 2>&1)" || failed=1
  echo "$peers"
  install=(--no-install)
  ort="$(value "${m}_ort_ms" "$peers")" torch="$(value "${m}_torch_ms" "$peers")"
  untuned="$(value "${m}_tessel_ms" "$peers")"
  # The tuned modules and ONNX Runtime in alternation, BENCH_TUNE_ROUNDS rounds (7): each
  # figure is the median of its rounds, so that the machine's drift between minutes (tens of
  # percent on a shared host, and ORT's own fast and slow modes) hits both sides of a ratio.
  tuned_rounds=() auto_rounds=() ort_rounds=() ort_spin=()
  grep -q "peers wait without spinning" <<<"$peers" && ort_spin=(--no-spin)  # as the harness timed ORT
  [ -n "$ort" ] && ort_rounds+=("$ort")
  for ((round = 1; round <= rounds; ++round)); do
    if ((round > 1)) && [ -n "$ort" ]; then
      o="$(node bench/peers/time_ort.js "$peers_out/$m" --name "$m" --threads "$TESSEL_NUM_THREADS" "${ort_spin[@]}" 2>&1)" &&
        ort_rounds+=("$(value "${m}_ort_ms" "$o")")
    fi
    if [ -d "$out/$m.tuned" ]; then
      t="$(time_module "$out/$m.tuned")" && tuned_rounds+=("$t") || failed=1
    fi
    if [ -d "$out/$m.auto.tuned" ]; then
      t="$(time_module "$out/$m.auto.tuned")" && auto_rounds+=("$t") || failed=1
    fi
  done
  ((${#ort_rounds[@]})) && ort="$(median "${ort_rounds[@]}")" && echo "# ORT rounds: ${ort_rounds[*]} ms"
  tuned="" auto=""
  if ((${#tuned_rounds[@]})); then
    tuned="$(median "${tuned_rounds[@]}")"
    echo "# template-tuned rounds: ${tuned_rounds[*]} ms"
    echo "BENCH ${m}_tessel_tuned_ms $tuned ms"
  fi
  if ((${#auto_rounds[@]})); then
    auto="$(median "${auto_rounds[@]}")"
    echo "# auto-scheduled rounds: ${auto_rounds[*]} ms"
    echo "BENCH ${m}_tessel_auto_ms $auto ms"
    [ -n "$ort" ] && echo "BENCH ${m}_tessel_auto_vs_ort $(ratio "$auto" "$ort") ratio"
    paired="$(paired_ratio auto_rounds ort_rounds)" && echo "BENCH ${m}_tessel_auto_vs_ort_paired $paired ratio"
    paired="$(paired_ratio auto_rounds tuned_rounds)" && echo "BENCH ${m}_tessel_auto_vs_tuned_paired $paired ratio"
    [ -n "$tuned" ] && echo "BENCH ${m}_tessel_auto_vs_tuned $(ratio "$auto" "$tuned") ratio"
  fi
  if [ -n "$tuned" ]; then
    [ -n "$ort" ] && echo "BENCH ${m}_tessel_tuned_vs_ort $(ratio "$tuned" "$ort") ratio"
    paired="$(paired_ratio tuned_rounds ort_rounds)" && echo "BENCH ${m}_tessel_tuned_vs_ort_paired $paired ratio"
    [ -n "$torch" ] && echo "BENCH ${m}_tessel_tuned_vs_torch $(ratio "$tuned" "$torch") ratio"
    [ -n "$untuned" ] && echo "BENCH ${m}_tessel_tuned_vs_untuned $(ratio "$tuned" "$untuned") ratio"
  fi
  summary+=("$(printf '%-12s %9s %9s %14s %12s %14s %14s' "$m" "${ort:--}" "${torch:--}" "${untuned:--}" "${tuned:--}" \
    "$(ratio "${tuned:-0}" "${ort:-0}")" "${auto:--}")")
done

print_summary() {
  ((${#summary[@]})) || return 0
  echo
  echo "== tessel vs peers, batch 1, ${TESSEL_NUM_THREADS} threads (ms; this run); tuned: ${BENCH_TUNE_TUNER:-xgb}, ${BENCH_TUNE_TRIALS:-64} trials per task =="
  printf '%-12s %9s %9s %14s %12s %14s %14s\n' model ORT PyTorch "tessel untuned" "tessel tuned" "tuned / ORT" "auto-scheduled"
  printf '%s\n' "${summary[@]}"
}
print_summary
if has search; then
  run_bench search
  print_summary  # again, so that the network figures end the output too
fi
echo "# bench-tune took $(($(date +%s) - start)) s; load average now $(cut -d' ' -f1-3 /proc/loadavg); logs and modules in $out"
exit "$failed"
