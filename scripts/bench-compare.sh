#!/usr/bin/env bash
# Two engage builds side by side in one session: scripts/bench-orders.sh and bench-redeem.sh run
# against each binary in turn (before, after, before, after, …), and the medians of each figure
# are printed with the ratio after/before. For a change that must stay within noise (issue 39).
#
#   scripts/bench-compare.sh BEFORE_BINARY AFTER_BINARY [ROUNDS=3] [DURATION_SECS=10]
#
# MODES is passed on (default "embedded jetstream"). A build of another commit is made with
# `git worktree add /tmp/before <rev> && cargo build --release --bin engage` there, or by copying
# target/release/engage aside before the change.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
before=$1
after=$2
rounds=${3:-3}
duration=${4:-10}
[ -x "$before" ] && [ -x "$after" ] || { echo "usage: $0 BEFORE_BINARY AFTER_BINARY [ROUNDS] [DURATION]" >&2; exit 2; }
out=$(mktemp)
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    binary=$before
    [ "$side" = after ] && binary=$after
    BENCH_ENGAGE=$binary scripts/bench-orders.sh "$duration" 1 | sed -n "s/^run: \([a-z0-9-]*\) #1 .*orders\/s=\([0-9.]*\).*lag_p99_ms=\([0-9.]*\).*/$side orders-\1 \2 \3/p" >>"$out"
    BENCH_ENGAGE=$binary scripts/bench-redeem.sh "$duration" 1 | sed -n "s/^run: \([a-z0-9-]*\) customers=\([0-9]*\) calls\/s=\([0-9.]*\) p50=\([^ ]*\) p99=\([^ ]*\).*/$side redeem-\1-\2 \3 \5/p" >>"$out"
    echo "round $round $side done" >&2
  done
done
echo "| case | before (median/s) | after (median/s) | after/before | p99 before | p99 after |"
echo "|---|---|---|---|---|---|"
for case in $(awk '{print $2}' "$out" | sort -u); do
  b=$(median "$(awk -v c="$case" '$1 == "before" && $2 == c {print $3}' "$out" | tr '\n' ' ')")
  a=$(median "$(awk -v c="$case" '$1 == "after" && $2 == c {print $3}' "$out" | tr '\n' ' ')")
  bp=$(awk -v c="$case" '$1 == "before" && $2 == c {printf "%s ", $4}' "$out")
  ap=$(awk -v c="$case" '$1 == "after" && $2 == c {printf "%s ", $4}' "$out")
  echo "| $case | $b | $a | $(python3 -c "print(f'{$a/$b:.2f}' if $b else '-')") | $bp| $ap|"
done
echo
echo "raw lines: $out" >&2
