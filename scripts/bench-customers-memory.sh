#!/usr/bin/env bash
# Tenant actor memory for a brand with many customers: single orders, each from a new customer of
# one brand, are POSTed to engage (embedded) until CUSTOMERS orders are processed; engage's RSS is
# printed after every STEP customers, and its peak at the end. With a bounded customer cache the
# RSS levels off; with an unbounded one it grows with the customer count.
#
#   scripts/bench-customers-memory.sh [CUSTOMERS=1000000] [STEP=100000] [CONNECTIONS=32]
#
# BENCH_ENGAGE overrides the engage binary (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
customers=${1:-1000000}
step=${2:-100000}
connections=${3:-32}

need_wrk
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}

port=$(free_port)
ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/data" ENGAGE_LOG_LEVEL=warn "$engage_bin" serve >"$work/engage.log" 2>&1 &
pid=$!; pids+=($pid); wait_port "$port"
# wrk's threads each number their own customers; each run gets a fresh RUN_ID so order ids differ,
# while customer numbers continue (thread-local counters restart, so runs use distinct threads).
wrk_threads=2
RUN_ID=big NEW_CUSTOMERS=1 wrk -t"$wrk_threads" -c"$connections" -d3600s -s scripts/bench/orders.lua "http://127.0.0.1:$port" >/dev/null &
load=$!
start=$SECONDS
next=$step
while :; do
  processed=$(metric "$port" engage_events_processed_total)
  if [ "$processed" -ge "$next" ]; then
    echo "customers=$processed rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status") cached_customers=$(metric "$port" engage_cached_customers) elapsed_s=$((SECONDS - start))"
    next=$((next + step))
  fi
  [ "$processed" -ge "$customers" ] && break
  sleep 0.5
done
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true
echo "peak_rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status") customers=$(metric "$port" engage_events_processed_total) tenant_actors=$(metric "$port" engage_tenant_actors)"
