#!/usr/bin/env bash
# Digital bills on the embedded default (release build, 2 cores):
#   1. generation: ORDERS pos_a orders (default 100,000) of brand-b are posted and processed with
#      no bill configuration; then a brand-level SMS configuration is added and the
#      `bill_generation` job bills them all (each bill: a wallet debit, a queue row, the bill,
#      its code, the funnel, the queue record at status 3). Prints bills generated per second.
#   2. the bill page: `wrk -t1 -c32 -d10s` on `GET /b/<bill_id>` of one bill (each request also
#      counts an open: two durable writes), beside the bare axum floor serving a fixed HTML page
#      of about the same size, RUNS runs each (default 3), medians and the ratio.
#
#   scripts/bench-bills.sh [ORDERS=100000] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
orders=${1:-100000}
runs=${2:-3}
need_wrk
[ -x target/release/engage ] && [ -x target/release/bare-json-baseline ] || cargo build --release --bin engage --bin bare-json-baseline

port=$(free_port); data="$work/data"
ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" ENGAGE_LOG_LEVEL=warn target/release/engage serve >"$work/engage.log" 2>&1 &
pids+=($!); wait_port "$port"
cli=(env ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" target/release/engage)
staff=$("${cli[@]}" tokens create --kind staff --parent brand-b)

seed_start=$SECONDS
python3 - "$port" "$orders" <<'PY'
import http.client, json, sys
from concurrent.futures import ThreadPoolExecutor
port, orders = int(sys.argv[1]), int(sys.argv[2])
def post_range(start):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for n in range(start, orders, 8):
        body = {"parentBusinessId": "brand-b", "businessId": f"o{n % 20}", "orderId": f"b-{n}",
                "customer": {"name": f"Guest {n}", "phone": f"98{n:08d}"},
                "items": [{"name": "Masala dosa", "qty": 2, "price": 120}, {"name": "Coffee", "qty": 1, "price": 60}],
                "amount": 300}
        c.request("POST", "/injestion/pos_a", json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse(); r.read()
        assert r.status == 200, r.status
with ThreadPoolExecutor(8) as pool:
    list(pool.map(post_range, range(8)))
PY
applied() { curl -s "http://127.0.0.1:$port/metrics" | awk '/^engage_orders_applied_total\{outcome="new"\}/ {print $2}' | head -1; }
done_orders=0
while [ "${done_orders%.*}" -lt "$orders" ]; do sleep 1; done_orders=$(applied); done_orders=${done_orders:-0}; done
echo "seeded: $orders pos_a orders of 20 outlets processed in $((SECONDS - seed_start)) s"

python3 - "$port" "$staff" <<'PY'
import http.client, json, sys
port, staff = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
def post(path, body):
    body["parent_business_id"] = "brand-b"
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json", "token": staff})
    r = c.getresponse(); data = json.loads(r.read())
    assert r.status == 200, (path, r.status, data)
post("/crm_api/links/addBusinessConfig", {"mode": 1, "time": 0, "status": 1, "sms_template": "Your bill x_short_url"})
for widget in (1, 2, 5):
    post("/crm_api/links/addWidget", {"widget_id": widget})
for outlet in range(20):
    post("/crm_api/wallet/recharge", {"business_id": f"o{outlet}", "amount": 100000, "reference": f"r{outlet}"})
PY
start=$(date +%s.%N)
outcome=$("${cli[@]}" jobs run bill_generation)
end=$(date +%s.%N)
generated=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["generated"])' "$outcome")
python3 -c "import sys; g, s = int(sys.argv[1]), float(sys.argv[2]); print(f'generation: {g} bills in {s:.2f} s = {g / s:,.0f} bills/s')" "$generated" "$(echo "$end - $start" | bc)"
[ "$generated" = "$orders" ] || { echo "expected $orders bills: $outcome" >&2; exit 1; }

bill=$(curl -s -H "token: $staff" -H 'Content-Type: application/json' "http://127.0.0.1:$port/crm_api/get_digital_bill_customers" \
  -d '{"parent_business_id":"brand-b","business_id":"o1"}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["bill_id"])')
bare_port=$(free_port)
target/release/bare-json-baseline "127.0.0.1:$bare_port" >/dev/null 2>&1 &
pids+=($!); wait_port "$bare_port"
rps() { # url -> "<req/s> p99=<latency>"
  wrk -t1 -c32 -d10s --latency "$1" | awk '/Requests\/sec/ {r = $2} /^ +99%/ {p = $2} END {print r " p99=" p}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
engage_runs=(); bare_runs=()
for i in $(seq 1 "$runs"); do
  e=$(rps "http://127.0.0.1:$port/b/$bill"); b=$(rps "http://127.0.0.1:$bare_port/b/$bill")
  echo "run $i: engage GET /b/<id> $e; bare axum $b"
  engage_runs+=("${e%% *}"); bare_runs+=("${b%% *}")
done
e=$(printf '%s\n' "${engage_runs[@]}" | median); b=$(printf '%s\n' "${bare_runs[@]}" | median)
python3 -c "import sys; e, b = float(sys.argv[1]), float(sys.argv[2]); print(f'bill page medians: engage {e:,.0f} req/s, bare axum {b:,.0f} req/s, ratio {e / b:.2f}')" "$e" "$b"
