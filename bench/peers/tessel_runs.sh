# Sourced by the benchmark scripts: `tessel_median_ms TESSEL DIR [LOG]` times a compiled module
# the way time_ort.js and time_torch.py time the peers (single runs after warm-up, at least 10
# and at least 2 s of them, at most 1000) and prints the median of those runs in ms, so that a
# ratio to a peer compares one statistic. `tessel benchmark`'s default figure, the mean of 100-ms
# measurements, counts every stall the shared host adds; the peers' median of single runs does
# not. The whole output (with that mean) is appended to LOG when given.
tessel_median_ms() {
  local tessel="$1" dir="$2" log="${3:-/dev/null}" b ms runs
  # A first short timing sizes the run count to the peers' 2 s.
  b="$("$tessel" benchmark "$dir" --number 1 --min-repeat-ms 0 --repeat 5 2>&1)" || {
    echo "tessel benchmark $dir failed: $b" >&2; return 1; }
  ms="$(sed -n 's/^median \([0-9.eE+-]*\) ms,.*/\1/p' <<<"$b" | tail -1)"
  [ -n "$ms" ] || { echo "no 'median' line from tessel benchmark $dir" >&2; return 1; }
  runs="$(awk -v m="$ms" 'BEGIN { r = (m > 0) ? int(2000 / m) + 1 : 10; if (r < 10) r = 10; if (r > 1000) r = 1000; print r }')"
  b="$("$tessel" benchmark "$dir" --number 1 --min-repeat-ms 0 --repeat "$runs" 2>&1)" || {
    echo "tessel benchmark $dir failed: $b" >&2; return 1; }
  echo "$b" >>"$log"
  ms="$(sed -n 's/^median \([0-9.eE+-]*\) ms,.*/\1/p' <<<"$b" | tail -1)"
  [ -n "$ms" ] || { echo "no 'median' line from tessel benchmark $dir" >&2; return 1; }
  echo "$ms"
}
