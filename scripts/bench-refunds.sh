#!/usr/bin/env bash
# Refunds against orders (issue 42): what applying a whole refund costs beside applying an order.
# Each run starts engage on the embedded default, posts single orders for DURATION seconds
# (scripts/bench/orders.lua), waits until they are processed, then posts, for as long, the same
# orders again with another amount (UPDATE=1: order updates), then the same orders with
# `"status": 3` (REFUND=1: each one a whole refund of an order of the first phase, taking back its
# totals, points and rollups), waiting after each phase. Printed per phase: POSTs/s, and events
# processed per second from the phase's start to its last event processed.
#
#   scripts/bench-refunds.sh [DURATION_SECS=10] [RUNS=3] [CONNECTIONS=32]
#
# BENCH_ENGAGE overrides the engage binary.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
runs=${2:-3}
connections=${3:-32}

need_wrk
[ -n "${BENCH_ENGAGE:-}" ] || [ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}

declare -A results
phase() { # port run refund(0|1) update(0|1) -> "posts/s processed/s"
  local port=$1 run=$2 refund=$3 update=$4 before start out rps ingested processed deadline
  before=$(metric "$port" engage_events_processed_total)
  start=$(date +%s.%N)
  out=$(RUN_ID="r$run" REFUND=$refund UPDATE=$update wrk -t2 -c"$connections" -d"${duration}s" -s scripts/bench/orders.lua "http://127.0.0.1:$port")
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  local non2xx; non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  [ -z "${non2xx:-}" ] || { echo "refund=$refund: $non2xx non-2xx answers: the run is invalid" >&2; echo "$out" >&2; exit 1; }
  ingested=$(metric "$port" engage_ingested_total)
  deadline=$((SECONDS + 300))
  while :; do
    processed=$(metric "$port" engage_events_processed_total)
    [ "$processed" -ge "$ingested" ] && break
    [ "$SECONDS" -lt "$deadline" ] || { echo "only $processed of $ingested events processed after 300 s" >&2; exit 1; }
    sleep 0.05
  done
  python3 -c "print('$rps', f'{($processed - $before) / ($(date +%s.%N) - $start):.0f}')"
}

for run in $(seq 1 "$runs"); do
  port=$(free_port)
  ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/data-$run" ENGAGE_LOG_LEVEL=warn "$engage_bin" serve >"$work/engage-$run.log" 2>&1 &
  pid=$!; pids+=($pid); wait_port "$port"; sleep 1
  read -r o_rps o_proc < <(phase "$port" "$run" 0 0)
  read -r u_rps u_proc < <(phase "$port" "$run" 0 1)
  read -r r_rps r_proc < <(phase "$port" "$run" 1 0)
  echo "run: #$run orders: posts/s=$o_rps processed/s=$o_proc  updates: posts/s=$u_rps processed/s=$u_proc  refunds: posts/s=$r_rps processed/s=$r_proc"
  results[o_rps]+="$o_rps "; results[o_proc]+="$o_proc "; results[r_rps]+="$r_rps "; results[r_proc]+="$r_proc "
  results[u_rps]+="$u_rps "; results[u_proc]+="$u_proc "
  kill "$pid"; wait "$pid" 2>/dev/null || true
done

o=$(median "${results[o_proc]}"); r=$(median "${results[r_proc]}"); u=$(median "${results[u_proc]}")
echo
echo "| phase | POSTs/s | processed/s | vs orders |"
echo "|---|---|---|---|"
echo "| orders | $(median "${results[o_rps]}") | $o | 1.00 |"
echo "| updates of those orders (another amount) | $(median "${results[u_rps]}") | $u | $(python3 -c "print(f'{$u/$o:.2f}')") |"
echo "| whole refunds of those orders | $(median "${results[r_rps]}") | $r | $(python3 -c "print(f'{$r/$o:.2f}')") |"
