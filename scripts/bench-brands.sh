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
# (to compare two builds). ROUNDS (default 1) repeats the runs, the brand counts alternating within
# each round, and then prints each count's median orders/s and engage's CPU time per 1,000 orders
# against the first count's: this machine's throughput moves 1.5x from run to run, so a ratio is
# only read from medians of alternating runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
connections=${2:-32}

need_wrk
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}
counts=${BRAND_COUNTS:-50 20000 100000}

# engage's user + system CPU time so far, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_per_s=$(getconf CLK_TCK)
rounds=${ROUNDS:-1}
results="$work/results"

for round in $(seq 1 "$rounds"); do
for brands in $counts; do
  port=$(free_port)
  # a fresh store per run: the store keeps each table file's index and filter blocks in memory,
  # so a data dir reused from an earlier round would start every later run bigger
  rm -rf "$work/data-$brands"
  ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/data-$brands" ENGAGE_LOG_LEVEL=warn \
    ENGAGE_PASSIVATE_AFTER_SECS=5 "$engage_bin" serve >"$work/engage-$brands.log" 2>&1 &
  pid=$!; pids+=($pid); wait_port "$port"
  sleep 1
  start_rss=$(rss "$pid" VmRSS)
  cpu_before=$(cpu_ticks "$pid")
  out=$(RUN_ID="b$brands" BRANDS="$brands" wrk -t2 -c"$connections" -d"${duration}s" -s scripts/bench/orders.lua "http://127.0.0.1:$port")
  ingested=$(metric "$port" engage_ingested_total)
  until [ "$(metric "$port" engage_events_processed_total)" -ge "$ingested" ]; do sleep 0.2; done
  loaded_rss=$(rss "$pid" VmRSS)
  cpu_ms_per_1k=$(awk -v t="$(( $(cpu_ticks "$pid") - cpu_before ))" -v hz="$ticks_per_s" -v n="$ingested" \
    'BEGIN {printf "%.0f", n ? t * 1000 / hz * 1000 / n : 0}')
  rps=$(awk '/Requests\/sec/ {printf "%d", $2}' <<<"$out")
  waited=0
  until [ "$(metric "$port" engage_tenant_actors)" -le 0 ] || [ "$waited" -ge 120 ]; do sleep 1; waited=$((waited + 1)); done
  # the store flushes and frees its memtables 10-11 s after its last write, and idle workers
  # return freed pages at most every 10 s (src/reclaim.rs): 25 s covers both
  sleep 25
  passivated_rss=$(rss "$pid" VmRSS)
  echo "$brands $rps $cpu_ms_per_1k" >>"$results"
  echo "round=$round brands=$brands orders=$ingested orders_per_s=$rps cpu_ms_per_1k_orders=$cpu_ms_per_1k per_brand=$((ingested / brands)) rss_start_mb=$start_rss rss_loaded_mb=$loaded_rss rss_passivated_mb=$passivated_rss peak_rss_mb=$(rss "$pid" VmHWM) actors_left=$(metric "$port" engage_tenant_actors) passivations=$(metric "$port" engage_actor_passivations_total)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
done

# medians per brand count, and their ratio to the first count's
python3 - "$results" $counts <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
counts = sys.argv[2:]
med = {c: (statistics.median(int(r[1]) for r in rows if r[0] == c),
           statistics.median(int(r[2]) for r in rows if r[0] == c)) for c in counts}
base = med[counts[0]]
for c in counts:
    rps, cpu = med[c]
    print(f"median brands={c} runs={sum(r[0] == c for r in rows)} orders_per_s={rps:.0f} "
          f"cpu_ms_per_1k_orders={cpu:.0f} orders_per_s_vs_{counts[0]}={rps / base[0]:.2f} "
          f"cpu_per_order_vs_{counts[0]}={cpu / base[1]:.2f}")
PY
