#!/usr/bin/env bash
# run-fuzzer.sh HARNESS SEED_TOOL KEPT_CORPUS WORK_DIR [DICTIONARY]: runs one libFuzzer harness
# for $TESSEL_FUZZ_SECONDS (default 5) over fresh seeds and the kept findings, with the
# dictionary of its format when given (json.dict for the JSON harnesses). A finding fails the
# run and is left in WORK_DIR/<harness>/ with the command that reproduces it.
set -euo pipefail
harness="$1" seeds_tool="$2" kept="$3" work="$4" dictionary="${5:-}"
name="$(basename "$harness")"
seconds="${TESSEL_FUZZ_SECONDS:-5}"
dir="$work/$name"
rm -rf "$dir"
mkdir -p "$dir/corpus" "$dir/seeds" "$kept"
"$seeds_tool" "$dir/seeds"
# New inputs go to the working corpus; the seeds and the kept findings are only read.
set +e
"$harness" ${dictionary:+-dict="$dictionary"} -max_total_time="$seconds" -seed="${TESSEL_FUZZ_SEED:-1}" -timeout=20 -rss_limit_mb=4096 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" "$dir/seeds/$name" "$kept" 2>"$dir/log"
status=$?
set -e
grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$dir/log" | tr '\n' ' '
echo
if [ $status -ne 0 ]; then
  tail -n 60 "$dir/log"
  for artifact in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-*; do
    [ -e "$artifact" ] || continue
    echo "finding: $artifact (reproduce: $harness $artifact; keep it in $kept once fixed)"
  done
  exit 1
fi
