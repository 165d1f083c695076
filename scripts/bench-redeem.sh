#!/usr/bin/env bash
# Redeem calls/s with p50/p99 latency, for one hot customer and for 1000 customers, with engage on
# the embedded store and on NATS (JetStream bus + KV store), beside the bare axum JSON-parse
# baseline (benches/bare_json_baseline.rs) answering the same bodies in the same run.
#
#   scripts/bench-redeem.sh [DURATION_SECS=10] [RUNS=3] [CONNECTIONS=32]
#
# WRK_THREADS sets wrk's threads (default 2). Each run also prints server_p99: engage's own p99
# for the route (from its engage_http_request_duration_seconds histogram, so a bucket bound: the
# time inside engage, without the client's and the kernel's queueing).
# PROBE=1 also runs scripts/bench/probe.py during each engage run: GET /healthz on engage and a
# page of the baseline server, every ~5 ms, to tell a stall of the whole server from slow calls.
# CAPTURE=1 records each engage run with tcpdump and prints `wire … p99=…` (each request's own
# latency; scripts/bench/common.sh, capture_start): wrk's p99 adds synthetic samples for every slow
# answer, so a few stalls inflate it many times over.
# BENCH_ENGAGE overrides the engage binary (to compare two builds); MODES (default
# "embedded jetstream") picks the modes (`jetstream-r3`: three nats-servers routed on loopback,
# every stream and bucket with three replicas, as the cluster runs); PROFILE_DIR samples engage with perf during the first
# 1000-customer run of each mode (scripts/bench/profile.sh) into PROFILE_DIR/redeem-<mode>.{svg,txt}.
# PACED_RATE=N (default 1000; 0: none) adds a case `<mode>-paced` per mode: the 1000 customers at
# N calls/s (scripts/bench/pace.lua holds the rate, as wrk2's -R), the latency at a set load rather
# than at saturation, where it is the connections over the rate the cores allow (Little's law).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
runs=${2:-3}
connections=${3:-32}
threads=${WRK_THREADS:-2}
customers_many=1000
engage_bin=${BENCH_ENGAGE:-target/release/engage}
modes=${MODES:-embedded jetstream}
paced_rate=${PACED_RATE:-1000}

need_wrk
need_capture
nats_bin=$(nats_server_bin)
[ -x target/release/engage ] && [ -x target/release/bare-json-baseline ] || cargo build --release --bin engage --bin bare-json-baseline

# Seeds a brand: rules (10% earned, redemptions from 1 point), the hot customer 9700000000 with
# 1,000,000 points and customers 9700000000..9700000999 with at least 10,000 points each.
seed() { # port data_dir -> prints the integration token
  local port=$1 data=$2 staff integration
  staff=$(ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" "$engage_bin" tokens create --kind staff --parent brand-bench)
  integration=$(ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" "$engage_bin" tokens create --kind integration --parent brand-bench)
  python3 - "$port" "$staff" "$customers_many" <<'PY'
import http.client, json, sys, time
port, staff, many = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
c = http.client.HTTPConnection("127.0.0.1", port)
def post(path, body, headers={}, ok=(200,)):
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **headers})
    r = c.getresponse(); data = r.read()
    assert r.status in ok, (path, r.status, data)
    return r.status, json.loads(data)
post("/crm_api/add_edit_rules", {"parent_business_id": "brand-bench", "earn_percent": 10, "min_bill": 0, "min_redeem_points": 1, "max_redeem_percent": 100}, {"token": staff})
for i in range(many):
    amount = 10_000_000 if i == 0 else 100_000
    post("/injestion/platform", {"parentBusinessId": "brand-bench", "businessId": "o1", "orderId": f"seed-{i}",
                                 "customer": {"phone": f"97{i:08d}"}, "amount": amount, "orderTime": "2026-11-21 10:00:00"})
deadline = time.time() + 120
while time.time() < deadline:
    status, d = post("/crm_api/get/customer/details", {"parent_business_id": "brand-bench", "customer_number": f"97{many-1:08d}"}, ok=(200, 404))
    if status == 200 and d["customer"]["loyalty_points"] >= 10000:
        break
    time.sleep(0.2)
PY
  echo "$integration"
}

declare -A results profiled
measure() { # label port token customers path [calls per second]
  local label=$1 port=$2 token=$3 customers=$4 path=$5 rate=${6:-0} out rps p50 p99 non2xx profiler=
  if [ -n "${PROFILE_DIR:-}" ] && [ -n "${engage_pid:-}" ] && [ "$customers" != 1 ] && [ -z "${profiled[$label]:-}" ]; then
    profiled[$label]=1; mkdir -p "$PROFILE_DIR"
    (sleep 1; scripts/bench/profile.sh "$engage_pid" $((duration - 2)) "$PROFILE_DIR/redeem-${label%-many}.svg") &
    profiler=$!
  fi
  [ "$label" = baseline ] || buckets "$port" engage_http_request_duration_seconds "route=\"$path\"" >"$work/before"
  probes=()
  if [ -n "${PROBE:-}" ] && [ "$label" != baseline ]; then
    python3 scripts/bench/probe.py "$port" /healthz "$((duration - 1))" | sed "s/^/$label engage /" & probes+=($!)
    python3 scripts/bench/probe.py "$base_port" /b/probe "$((duration - 1))" | sed "s/^/$label baseline /" & probes+=($!)
  fi
  local capture= wire=
  if [ -n "${CAPTURE:-}" ] && [ "$label" != baseline ]; then
    capture="$work/$label.pcap"; capture_start "$port" "$capture"
  fi
  out=$(PACE_RATE=$rate THREADS=$threads TOKEN="$token" CUSTOMERS="$customers" RUN_ID="$label$RANDOM" TARGET_PATH="$path" \
        wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s scripts/bench/redeem.lua "http://127.0.0.1:$port")
  if [ -n "$capture" ]; then
    wire=" $(capture_wire "$port" "$capture")"
    results["$label/wire_p99"]+="$(sed 's/.* p99=\([^ ]*\) .*/\1/' <<<"$wire") "
  fi
  for probe in "${probes[@]}"; do wait "$probe"; done
  server_p99=n/a
  if [ "$label" != baseline ]; then
    buckets "$port" engage_http_request_duration_seconds "route=\"$path\"" >"$work/after"
    server_p99=$(bucket_p99 "$work/before" "$work/after")
  fi
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  [ -z "$profiler" ] || wait "$profiler"
  [ -z "${non2xx:-}" ] || { echo "$label: $non2xx non-2xx answers: the run is invalid" >&2; echo "$out" >&2; exit 1; }
  echo "run: $label customers=$customers calls/s=$rps p50=$p50 p99=$p99 server_p99=$server_p99$wire"
  results["$label/rps"]+="$rps "; results["$label/p50"]+="$p50 "; results["$label/p99"]+="$p99 "
}

base_port=$(free_port)
target/release/bare-json-baseline "127.0.0.1:$base_port" >/dev/null 2>&1 &
pids+=($!); wait_port "$base_port"

for mode in $modes; do
  port=$(free_port); data="$work/data-$mode"; env=()
  if [ "$mode" = jetstream ]; then
    nport=$(free_port)
    "$nats_bin" -js -a 127.0.0.1 -p "$nport" -sd "$work/nats" >/dev/null 2>&1 &
    pids+=($!); wait_port "$nport"
    env=(ENGAGE_NATS_URL="nats://127.0.0.1:$nport")
  elif [ "$mode" = jetstream-r3 ]; then
    # three servers routed into one cluster; every stream and bucket with three replicas
    start_nats_cluster "$nats_bin" r3
    env=(ENGAGE_NATS_URL="$nats_urls" ENGAGE_NATS_REPLICAS=3)
  fi
  env "${env[@]}" ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" ENGAGE_LOG_LEVEL=warn "$engage_bin" serve >"$work/engage-$mode.log" 2>&1 &
  pid=$!; pids+=($pid); wait_port "$port"; engage_pid=$pid
  # a cluster elects its JetStream leaders first: wait for /readyz
  for _ in $(seq 1 600); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/readyz', timeout=1)" 2>/dev/null && break
    sleep 0.1
  done
  token=$(seed "$port" "$data")
  for run in $(seq 1 "$runs"); do
    measure baseline "$base_port" "$token" 1 /v1/logs
    measure "$mode-hot" "$port" "$token" 1 /integration/v1/redeem_points
    measure "$mode-many" "$port" "$token" "$customers_many" /integration/v1/redeem_points
    if [ "$paced_rate" -gt 0 ]; then
      measure "$mode-paced" "$port" "$token" "$customers_many" /integration/v1/redeem_points "$paced_rate"
    fi
  done
  echo "run: $mode peak_rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")"
  kill "$pid"; wait "$pid" 2>/dev/null || true; engage_pid=
done

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | python3 -c '
import sys, re
def ms(v):
    m = re.match(r"([0-9.]+)(us|ms|s)?$", v)
    n, u = float(m.group(1)), m.group(2) or ""
    return n / 1000 if u == "us" else n * 1000 if u == "s" else n
vals = sorted(sys.stdin.read().split(), key=ms)
print(vals[len(vals) // 2])'; }
echo
base=$(median "${results[baseline/rps]}")
echo "| case | redeem calls/s | vs bare JSON parse | p50 | p99 |"
echo "|---|---|---|---|---|"
echo "| bare axum JSON parse (baseline) | $base | 1.00 | $(median "${results[baseline/p50]}") | $(median "${results[baseline/p99]}") |"
for label in embedded-hot embedded-many embedded-paced jetstream-hot jetstream-many jetstream-paced jetstream-r3-hot jetstream-r3-many jetstream-r3-paced; do
  [ -n "${results[$label/rps]:-}" ] || continue
  r=$(median "${results[$label/rps]}")
  echo "| engage, $label | $r | $(python3 -c "print(f'{$r/$base:.2f}')") | $(median "${results[$label/p50]}") | $(median "${results[$label/p99]}") |"
done
if [ -n "${CAPTURE:-}" ]; then
  echo
  echo "| case | wrk p99 (corrected by wrk) | wire p99 (each request's own) |"
  echo "|---|---|---|"
  for label in embedded-hot embedded-many embedded-paced jetstream-hot jetstream-many jetstream-paced jetstream-r3-hot jetstream-r3-many jetstream-r3-paced; do
    [ -n "${results[$label/wire_p99]:-}" ] || continue
    echo "| engage, $label | $(median "${results[$label/p99]}") | $(median "${results[$label/wire_p99]}") |"
  done
fi
