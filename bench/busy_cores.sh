# Sourced by the benchmark scripts: `busy_cores` prints how many cores other programs keep busy,
# sampled from /proc/stat over one second (e.g. 0.03 on a quiet machine, 1.98 beside a -j2
# build). The 1-minute load average is no measure here: right after a benchmark's own tuning
# stage it still reads 2 on an idle 2-core machine.
busy_cores() {
  local a b
  a="$(head -1 /proc/stat)"
  sleep 1
  b="$(head -1 /proc/stat)"
  awk -v a="$a" -v b="$b" -v n="$(nproc)" 'BEGIN {
    split(a, x); split(b, y); total = 0; idle = 0
    for (i = 2; i <= 9; i++) total += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.2f", (total > 0 ? n * (total - idle) / total : 0) }'
}
