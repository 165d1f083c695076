#!/usr/bin/env bash
# Memory under a sustained order load (issue 57): single-order POSTs to /injestion/platform on the
# embedded default for DURATION seconds (orders.lua: 50 brands, customers drawn from 100,000 phone
# numbers per brand). Prints RSS 8 s into the load, a sample every 10 s (RSS, cached customers,
# memtables), then the peak RSS, the peak over the 8 s figure, and orders/s.
#
#   scripts/bench-soak.sh [DURATION_SECS=120] [CONNECTIONS=32]
#
# BENCH_ENGAGE overrides the engage binary (to compare two builds); ENGAGE_* settings given in the
# environment reach engage (e.g. ENGAGE_CACHED_CUSTOMERS_MAX).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-120}
connections=${2:-32}

need_wrk
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}

port=$(free_port)
ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/data" ENGAGE_LOG_LEVEL=warn \
  "$engage_bin" serve >"$work/engage.log" 2>&1 &
pid=$!; pids+=($pid); wait_port "$port"
sleep 1
echo "start rss_mb=$(rss "$pid" VmRSS)"
RUN_ID=soak wrk -t2 -c"$connections" -d"${duration}s" -s scripts/bench/orders.lua "http://127.0.0.1:$port" >"$work/wrk.out" &
wrk_pid=$!
sleep 8
rss_8s=$(rss "$pid" VmRSS)
echo "t=8 rss_mb=$rss_8s processed=$(metric "$port" engage_events_processed_total)"
sleep 2
for t in $(seq 10 10 "$duration"); do
  echo "t=$t rss_mb=$(rss "$pid" VmRSS) cached_customers=$(metric "$port" engage_cached_customers)" \
    "memtables_mb=$(( $(metric "$port" engage_store_memtable_bytes) >> 20 ))" \
    "processed=$(metric "$port" engage_events_processed_total)"
  [ "$t" -ge "$duration" ] || sleep 10
done
wait "$wrk_pid"
ingested=$(metric "$port" engage_ingested_total)
until [ "$(metric "$port" engage_events_processed_total)" -ge "$ingested" ]; do sleep 0.2; done
peak=$(rss "$pid" VmHWM)
rps=$(awk '/Requests\/sec/ {printf "%d", $2}' "$work/wrk.out")
echo "soak duration_s=$duration orders=$ingested orders_per_s=$rps rss_8s_mb=$rss_8s peak_rss_mb=$peak" \
  "peak_over_8s=$(awk -v p="$peak" -v e="$rss_8s" 'BEGIN {printf "%.2f", p / e}')"
