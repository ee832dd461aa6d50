#!/usr/bin/env bash
# Runs the unit and integration tests of native crates under valgrind's memcheck: every test must
# pass, with no memory error and 0 bytes definitely lost (`--errors-for-leak-kinds=definite`; the
# "possibly lost" blocks are the test harness's own thread-locals). Prints the time per crate.
#
#   tests/valgrind/run-valgrind.sh                 # every workspace crate (see docs/TESTING-valgrind.md for times)
#   tests/valgrind/run-valgrind.sh ferrodl-relay   # some crates
#
# Environment: VALGRIND_TEST_THREADS (default 2), VALGRIND_TEST_FILTER (a libtest name filter).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
crates=("$@")
if ((${#crates[@]} == 0)); then
  crates=(ferrodl-relay ferrodl-comm ferrodl-sharing ferrodl-data ferrodl-optim ferrodl-tensor ferrodl-nn ferrodl-testutil ferrodl-jni)
fi
logdir=target/valgrind
mkdir -p "$logdir"
status=0
for crate in "${crates[@]}"; do
  # The test executables of the crate (lib, integration tests), as cargo reports them.
  mapfile -t exes < <(cargo test -p "$crate" --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    try: m=json.loads(l)
    except ValueError: continue
    if m.get("reason")=="compiler-artifact" and m.get("profile",{}).get("test") and m.get("executable"): print(m["executable"])')
  start=$(date +%s)
  for exe in "${exes[@]}"; do
    log="$logdir/$(basename "$exe").log"
    if valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
        "$exe" --test-threads="${VALGRIND_TEST_THREADS:-2}" ${VALGRIND_TEST_FILTER:-} >"$log" 2>&1; then
      echo "ok   $crate $(basename "$exe"): $(grep -h 'test result' "$log" | tr '\n' ' ') $(grep -h 'definitely lost' "$log" | sed 's/.*definitely/definitely/')"
    else
      status=1
      echo "FAIL $crate $(basename "$exe") (log: $log)"
      grep -h -E 'test result|FAILED|panicked|definitely lost|ERROR SUMMARY' "$log" | head -20
    fi
  done
  echo "time $crate: $(( $(date +%s) - start )) s under valgrind (${#exes[@]} test executables)"
done
exit $status
