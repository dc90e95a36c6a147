#!/usr/bin/env bash
# The phase clock of the Makefile's top-level commands (`make demo`, `make check`, `make test`):
# each phase runs through it and leaves its wall time and its CPU time (user + system of all its
# processes) in a file, which the command prints at its end, so that every run says where its
# time went (the figure CI and the README quote) and how busy it kept the cores (CPU / wall
# below the core count: the phase waited, and another phase could have run beside it).
#
#   timed.sh FILE PHASE COMMAND [ARGS...]   runs COMMAND; appends "SECONDS<TAB>PHASE<TAB>CPU
#                                           SECONDS<TAB>START" (START: the epoch second) to FILE;
#                                           exits with COMMAND's status (recorded either way)
#   timed.sh --report FILE [TITLE]          prints the phases in order (a phase run twice: the
#                                           sum) and the total: the wall time from the first
#                                           start to the last end (phases that ran side by side
#                                           count once), the CPU time of all
set -uo pipefail

if [ "${1:-}" = --report ]; then
  file="$2" title="${3:-phases}"
  [ -s "$file" ] || exit 0
  echo
  echo "== $title: wall time per phase (load average now $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores) =="
  awk -F'\t' '!($2 in s) { order[++n] = $2 } { s[$2] += $1; c[$2] += $3; sum += $1; cpu += $3 }
    # Lines with a start time give the span of the whole command; older lines only a sum.
    $4 != "" { if (first == "" || $4 < first) first = $4; if ($4 + $1 > last) last = $4 + $1 }
    $4 == "" { untimed += $1 }
    function line(name, wall, busy) {
      printf "  %-22s %6d s  (%d min %02d s)  CPU %6d s  (%.1f cores busy)\n", name, wall, wall / 60, wall % 60, busy, (wall > 0 ? busy / wall : 0)
    }
    END { for (i = 1; i <= n; ++i) line(order[i], s[order[i]], c[order[i]])
          total = first == "" ? sum : last - first + untimed
          line("total", total, cpu) }' "$file"
  exit 0
fi

(($# >= 3)) || { echo "usage: timed.sh FILE PHASE COMMAND [ARGS...] | timed.sh --report FILE [TITLE]" >&2; exit 2; }
file="$1" phase="$2"
shift 2
mkdir -p "$(dirname "$file")"
start=$(date +%s)
"$@"
rc=$?
seconds=$(($(date +%s) - start))
# `times` prints the shell's own and then its children's user and system time ("0m1.250s 0m0.310s").
# It must run in this shell: a command substitution's subshell has no children of its own.
times_file=$(mktemp)
times >"$times_file"
cpu=$(awk 'NR == 2 { t = 0; for (f = 1; f <= 2; ++f) { split($f, p, /[ms]/); t += p[1] * 60 + p[2] } printf "%d", t }' "$times_file")
rm -f "$times_file"
printf '%s\t%s\t%s\t%s\n' "$seconds" "$phase" "$cpu" "$start" >>"$file"
((rc == 0)) || echo "timed.sh: $phase failed (exit $rc) after $seconds s" >&2
exit "$rc"
