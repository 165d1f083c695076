#!/usr/bin/env bash
# The nightly journey run over one brand's audience: CUSTOMERS customers (default 200,000) of
# brand-j who all last ordered on 2026-01-01, and an enabled lost-customers journey (30 days).
# Prints, for the embedded store and for NATS (JetStream bus + KV store):
#   - activation run: the first run after the journey is turned on (backtrack: at most 10,000
#     sends, each a wallet debit, a queue row and a decision row);
#   - re-run: the same run again (nothing is sent twice: every customer is looked up);
#   - steady run (x RUNS, median): a later night with no new lapse (a pure audience scan);
# each as audience rows scanned per second, and the engage process's peak RSS (VmHWM, over the
# whole process: seeding included) beside its RSS before the runs.
#
#   scripts/bench-journeys.sh [CUSTOMERS=200000] [RUNS=3] [MODES="embedded nats"]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
customers=${1:-200000}
runs=${2:-3}
modes=${3:-embedded nats}

nats_bin=$(nats_server_bin)
[ -x target/release/engage ] || cargo build --release --bin engage

new_orders() { # port -> orders applied as new
  curl -s "http://127.0.0.1:$1/metrics" | awk '/^engage_orders_applied_total\{outcome="new"\}/ {print $2}' | head -1
}

bench() { # mode
  local mode=$1 port data env=() pid
  port=$(free_port); data="$work/data-$mode"
  if [ "$mode" = nats ]; then
    local nport; nport=$(free_port)
    "$nats_bin" -js -a 127.0.0.1 -p "$nport" -sd "$work/nats" >/dev/null 2>&1 &
    pids+=($!); wait_port "$nport"
    env=(ENGAGE_NATS_URL="nats://127.0.0.1:$nport")
  fi
  env "${env[@]}" ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" ENGAGE_LOG_LEVEL=warn target/release/engage serve >"$work/engage-$mode.log" 2>&1 &
  pid=$!; pids+=($pid); wait_port "$port"
  local cli=(env "${env[@]}" ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" target/release/engage)
  local staff; staff=$("${cli[@]}" tokens create --kind staff --parent brand-j)
  # seed: exactly one order per customer (8 connections), then wait until every customer exists
  python3 - "$port" "$customers" <<'PY'
import http.client, json, sys
from concurrent.futures import ThreadPoolExecutor
port, customers = int(sys.argv[1]), int(sys.argv[2])
def post_range(start):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for n in range(start, customers, 8):
        body = {"parentBusinessId": "brand-j", "businessId": "o1", "orderId": f"j-{n}",
                "customer": {"name": f"Guest {n}", "phone": f"96{n:08d}"}, "amount": 250, "orderTime": "2026-01-01 10:00:00"}
        c.request("POST", "/injestion/platform", json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
with ThreadPoolExecutor(8) as pool:
    list(pool.map(post_range, range(8)))
PY
  local seeded=0 deadline=$((SECONDS + 3600)) seed_start=$SECONDS
  while [ "${seeded:-0}" -lt "$customers" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "$mode: only $seeded of $customers customers after 60 min" >&2; exit 1; }
    sleep 1; seeded=$(new_orders "$port"); seeded=${seeded%.*}
  done
  echo "$mode seeded: $customers customers, processing finished $((SECONDS - seed_start)) s after the last POST; RSS before the runs: $(awk '/VmRSS/ {printf "%.0f", $2/1024}' /proc/$pid/status) MiB"
  python3 - "$port" "$staff" <<'PY'
import http.client, json, sys
port, staff = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
def post(path, body):
    body["parent_business_id"] = "brand-j"
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json", "token": staff})
    r = c.getresponse(); data = json.loads(r.read())
    assert r.status == 200, (path, r.status, data)
    return data
saved = post("/crm_api/save/campaign/journey", {"child_business_id": "0", "campaign_type_id": "6650c0a1e4b0c2f1a9000005",
    "campaign_data": {"channels": ["sms"], "sms_template": "We miss you x_cust_name", "days": 30, "daily_cap": 10000000}})
post("/crm_api/enable/automated/campaign/", {"campaign_journey_id": saved["campaign_journey_id"], "campaign_enabled": 1})
post("/crm_api/wallet/recharge", {"business_id": "o1", "amount": 100000})
PY
  run_job() { # now -> "scanned sent seconds"
    local start end out
    start=$(date +%s.%N)
    out=$("${cli[@]}" jobs run journeys --now "$1")
    end=$(date +%s.%N)
    python3 -c "import json,sys; o=json.loads(sys.argv[1]); o=o.get('outcome', o); print(o['scanned'], o['sent'], f'{$end - $start:.2f}')" "$out"
  }
  local at; at=$(python3 -c 'import datetime; print((datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=10)).isoformat())')
  local later; later=$(python3 -c 'import datetime; print((datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2)).isoformat())')
  report() { # label "scanned sent seconds"
    read -r scanned sent seconds <<<"$2"
    echo "$mode $1: scanned=$scanned sent=$sent seconds=$seconds rows_per_sec=$(python3 -c "print(round($scanned / $seconds))")"
  }
  report activation "$(run_job "$at")"
  report re-run "$(run_job "$at")"
  local rates=()
  for i in $(seq 1 "$runs"); do
    local r; r=$(run_job "$later"); report "steady#$i" "$r"
    read -r scanned _ seconds <<<"$r"; rates+=("$(python3 -c "print(round($scanned / $seconds))")")
  done
  echo "$mode steady median rows_per_sec=$(printf '%s\n' "${rates[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p") peak_rss_mib=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' /proc/$pid/status)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); customers=$customers"
for mode in $modes; do bench "$mode"; done
