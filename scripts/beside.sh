#!/usr/bin/env bash
# Runs a command in the background at the lowest CPU priority while another runs in the
# foreground, for `make test`: the sanitizer build beside the Release tests. The tests leave part
# of the cores idle (waiting on servers and timeouts, one long test running alone at the end), and
# a build at nice 19 takes only that idle time, so the tests run as fast as they would alone.
#
#   beside.sh LOG BACKGROUND_COMMAND -- FOREGROUND_COMMAND
#
# The background command's output goes to LOG (its last lines are printed if it fails); both
# commands run to their end, and the exit status is the foreground's if it failed, else the
# background's.
set -uo pipefail
(($# >= 3)) || { echo "usage: beside.sh LOG BACKGROUND_COMMAND -- FOREGROUND_COMMAND" >&2; exit 2; }
log="$1"
shift
background=()
while (($#)) && [ "$1" != -- ]; do background+=("$1"); shift; done
[ "${1:-}" = -- ] && (($# >= 2)) || { echo "beside.sh: expected -- and a foreground command" >&2; exit 2; }
shift
mkdir -p "$(dirname "$log")"
nice -n 19 "${background[@]}" >"$log" 2>&1 &
pid=$!
echo "beside.sh: started in the background at nice 19 (output in $log): ${background[*]}"
"$@"
foreground=$?
wait "$pid"
rc=$?
if ((rc != 0)); then
  echo "beside.sh: the background command failed (exit $rc): ${background[*]}; the end of $log:" >&2
  tail -n 40 "$log" >&2
else
  echo "beside.sh: the background command finished; its output is in $log"
fi
((foreground != 0)) && exit "$foreground"
exit "$rc"
