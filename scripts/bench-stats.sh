#!/usr/bin/env bash
# /stats figures (issue 12), release build:
#   1. answer time: a brand with ORDERS orders across 50 outlets over one year (the 365 IST days up
#      to 2026-11-22) is seeded into an embedded store as the engine leaves it (order rows, each
#      order's contribution, the day rollups; benches/stats_bench.rs `seed`); `engage serve` runs
#      on it and each /stats route is asked for the whole year 50 times over one keep-alive
#      connection: p50 / p99 in ms;
#   2. beside it, the same summary recomputed from the raw order rows (`recompute`, in process,
#      no HTTP): RUNS runs, median;
#   3. orders processed per second by the engine with the rollup reaction on and off
#      (`throughput`: TPUT_ORDERS orders of 20 brands, order times over the last 2 days, on the
#      embedded bus and store, published first, then processed by 16 partitions), RUNS runs
#      each, alternating which goes first: medians and their ratio.
#
#   scripts/bench-stats.sh [ORDERS=1000000] [RUNS=3] [TPUT_ORDERS=80000]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
orders=${1:-1000000}
runs=${2:-3}
tput_orders=${3:-80000}
[ -x target/release/engage ] && [ -x target/release/stats-bench ] || cargo build --release --features inspect --bin engage --bin stats-bench

data="$work/data"
target/release/stats-bench seed "$data" stats-brand "$orders" 50
port=$(free_port)
ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" ENGAGE_LOG_LEVEL=warn target/release/engage serve >"$work/engage.log" 2>&1 &
pid=$!; pids+=($pid); wait_port "$port"
staff=$(ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" target/release/engage tokens create --kind staff --parent stats-brand 2>/dev/null)
python3 - "$port" "$staff" <<'PY'
import http.client, json, statistics, sys, time
port, token = int(sys.argv[1]), sys.argv[2]
conn = http.client.HTTPConnection("127.0.0.1", port)
def ask(path, body):
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json", "token": token})
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise SystemExit(f"{path}: {response.status} {data[:300]!r}")
    return json.loads(data)
year = {"parent_business_id": "stats-brand", "start": "2025-11-23", "end": "2026-11-22"}
routes = ["dashboard/summary", "metrics/orders", "metrics/outlets", "metrics/hour-heatmap", "metrics/meal-breakdown",
          "metrics/items", "metrics/top-items", "metrics/geo", "metrics/fulfillment", "metrics/special-days",
          "metrics/underperforming"]
cases = [(r, year) for r in routes] + [("dashboard/summary", dict(year, business_id="outlet-07"))]
for route, body in cases:
    ask("/stats/" + route, body)  # warm-up
    times = []
    for _ in range(50):
        started = time.perf_counter()
        answer = ask("/stats/" + route, body)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    what = route + (" (one outlet)" if "business_id" in body else "")
    extra = f" orders={answer['data']['totals']['orders']}" if route == "dashboard/summary" else ""
    print(f"answer {what}: p50={statistics.median(times):.1f} ms p99={p99:.1f} ms{extra}")
PY
kill "$pid"; wait "$pid" 2>/dev/null || true
target/release/stats-bench recompute "$data" stats-brand 50 2025-11-23 2026-11-22 "$runs" | tee "$work/recompute.txt"
target/release/stats-bench throughput "$work/throughput" "$tput_orders" 2 "$runs" | tee "$work/throughput.txt"
python3 - "$work/recompute.txt" "$work/throughput.txt" <<'PY'
import re, statistics, sys
recompute = [float(m) for m in re.findall(r": ([0-9.]+) ms", open(sys.argv[1]).read())]
text = open(sys.argv[2]).read()
on = [int(v) for v in re.findall(r"rollups=on orders_per_sec=(\d+)", text)]
off = [int(v) for v in re.findall(r"rollups=off orders_per_sec=(\d+)", text)]
print(f"recompute from raw orders: median {statistics.median(recompute):.0f} ms")
print(f"orders/s, rollups on: median {statistics.median(on):.0f}; off: median {statistics.median(off):.0f}; "
      f"on/off = {statistics.median(on) / statistics.median(off):.2f}")
PY
