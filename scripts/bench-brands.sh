#!/usr/bin/env bash
# Many brands on one node (issue 57): single-order POSTs to /injestion/platform on the embedded
# default, spread over N brands (a few orders each), for each N in BRAND_COUNTS, with the 50-brand
# run of bench-orders.sh beside them in the same invocation. For each run it prints orders/s, RSS
# at start, RSS after the load (every order processed), RSS once every actor has passivated
# (engage_tenant_actors 0; passivation after ENGAGE_PASSIVATE_AFTER_SECS=5 here, so actors also
# stop and start again during the load), and the peak RSS.
#
#   scripts/bench-brands.sh [DURATION_SECS=10] [CONNECTIONS=32]
#
# BRAND_COUNTS (default "50 20000 100000") picks the runs; BENCH_ENGAGE overrides the engage binary
# (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
connections=${2:-32}

need_wrk
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}
counts=${BRAND_COUNTS:-50 20000 100000}

rss() { awk "/$2/ {print int(\$2 / 1024)}" "/proc/$1/status"; }

for brands in $counts; do
  port=$(free_port)
  ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/data-$brands" ENGAGE_LOG_LEVEL=warn \
    ENGAGE_PASSIVATE_AFTER_SECS=5 "$engage_bin" serve >"$work/engage-$brands.log" 2>&1 &
  pid=$!; pids+=($pid); wait_port "$port"
  sleep 1
  start_rss=$(rss "$pid" VmRSS)
  out=$(RUN_ID="b$brands" BRANDS="$brands" wrk -t2 -c"$connections" -d"${duration}s" -s scripts/bench/orders.lua "http://127.0.0.1:$port")
  ingested=$(metric "$port" engage_ingested_total)
  until [ "$(metric "$port" engage_events_processed_total)" -ge "$ingested" ]; do sleep 0.2; done
  loaded_rss=$(rss "$pid" VmRSS)
  rps=$(awk '/Requests\/sec/ {printf "%d", $2}' <<<"$out")
  waited=0
  until [ "$(metric "$port" engage_tenant_actors)" -le 0 ] || [ "$waited" -ge 120 ]; do sleep 1; waited=$((waited + 1)); done
  # idle workers return freed pages at most every 10 s (src/reclaim.rs)
  sleep 12
  passivated_rss=$(rss "$pid" VmRSS)
  echo "brands=$brands orders=$ingested orders_per_s=$rps per_brand=$((ingested / brands)) rss_start_mb=$start_rss rss_loaded_mb=$loaded_rss rss_passivated_mb=$passivated_rss peak_rss_mb=$(rss "$pid" VmHWM) actors_left=$(metric "$port" engage_tenant_actors) passivations=$(metric "$port" engage_actor_passivations_total)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
