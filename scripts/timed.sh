#!/usr/bin/env bash
# The phase clock of the Makefile's top-level commands (`make demo`, `make check`, `make test`):
# each phase runs through it and leaves its wall time in a file, which the command prints at its
# end, so that every run says where its time went (the figure CI and the README quote).
#
#   timed.sh FILE PHASE COMMAND [ARGS...]   runs COMMAND; appends "SECONDS<TAB>PHASE" to FILE;
#                                           exits with COMMAND's status (recorded either way)
#   timed.sh --report FILE [TITLE]          prints the phases in order (a phase run twice: the
#                                           sum) and their total
set -uo pipefail

if [ "${1:-}" = --report ]; then
  file="$2" title="${3:-phases}"
  [ -s "$file" ] || exit 0
  echo
  echo "== $title: wall time per phase (load average now $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores) =="
  awk -F'\t' '!($2 in s) { order[++n] = $2 } { s[$2] += $1; total += $1 }
    END { for (i = 1; i <= n; ++i) printf "  %-22s %6d s  (%d min %02d s)\n", order[i], s[order[i]], s[order[i]] / 60, s[order[i]] % 60
          printf "  %-22s %6d s  (%d min %02d s)\n", "total", total, total / 60, total % 60 }' "$file"
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
printf '%s\t%s\n' "$seconds" "$phase" >>"$file"
((rc == 0)) || echo "timed.sh: $phase failed (exit $rc) after $seconds s" >&2
exit "$rc"
