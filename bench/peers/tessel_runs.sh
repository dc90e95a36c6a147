# Sourced by the benchmark scripts: `tessel_median_ms TESSEL DIR [LOG]` times a compiled module
# the way time_ort.js and time_torch.py time the peers (single runs after warm-up, at least 10
# and at least 2 s of them, at most 1000) and prints the median of those runs in ms, so that a
# ratio to a peer compares one statistic. `tessel benchmark`'s default figure, the mean of 100-ms
# measurements, counts every stall the shared host adds; the peers' median of single runs does
# not. The whole output (with that mean) is appended to LOG when given.
tessel_median_ms() {
  local tessel="$1" dir="$2" log="${3:-/dev/null}" ms runs
  # A first short timing sizes the run count to the peers' 2 s.
  ms="$(tessel_single_runs_ms "$tessel" "$dir" 5 /dev/null)" || return 1
  runs="$(awk -v m="$ms" 'BEGIN { r = (m > 0) ? int(2000 / m) + 1 : 10; if (r < 10) r = 10; if (r > 1000) r = 1000; print r }')"
  tessel_single_runs_ms "$tessel" "$dir" "$runs" "$log"
}

# tessel_single_runs_ms TESSEL DIR RUNS LOG -> the median ms of RUNS single runs.
tessel_single_runs_ms() {
  local b ms
  b="$("$1" benchmark "$2" --number 1 --min-repeat-ms 0 --repeat "$3" 2>&1)" || {
    echo "tessel benchmark $2 failed: $b" >&2; return 1; }
  echo "$b" >>"$4"
  ms="$(sed -n 's/^median \([0-9.eE+-]*\) ms,.*/\1/p' <<<"$b" | tail -1)"
  [ -n "$ms" ] || { echo "no 'median' line from tessel benchmark $2" >&2; return 1; }
  echo "$ms"
}
