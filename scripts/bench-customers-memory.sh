#!/usr/bin/env bash
# Tenant actor memory for a brand with many customers: single orders, each from a new customer of
# one brand, are POSTed to engage (embedded) in 2-second bursts, and after each burst the bench
# waits until every accepted order is processed (one brand is one actor, slower than the HTTP
# side: without the wait the growing backlog, not the actor, would be measured). engage's RSS and
# cached customers are printed after every STEP customers, and its peak at the end.
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
# Each burst gets its own RUN_ID (order ids differ) and wrk thread numbers offset by the burst, so
# customer numbers never repeat across bursts.
start=$SECONDS
next=$step
burst=0
while :; do
  burst=$((burst + 1))
  RUN_ID="big$burst" NEW_CUSTOMERS=1 CUSTOMER_BLOCK="$burst" wrk -t2 -c"$connections" -d2s -s scripts/bench/orders.lua "http://127.0.0.1:$port" >/dev/null
  ingested=$(metric "$port" engage_ingested_total)
  until [ "$(metric "$port" engage_events_processed_total)" -ge "$ingested" ]; do sleep 0.2; done
  if [ "$ingested" -ge "$next" ]; then
    echo "customers=$ingested rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status") cached_customers=$(metric "$port" engage_cached_customers) elapsed_s=$((SECONDS - start))"
    next=$((next + step))
  fi
  [ "$ingested" -ge "$customers" ] && break
done
echo "peak_rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status") customers=$(metric "$port" engage_events_processed_total) tenant_actors=$(metric "$port" engage_tenant_actors)"
