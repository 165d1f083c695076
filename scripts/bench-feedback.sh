#!/usr/bin/env bash
# Feedback figures on the embedded default (release build, 2 cores):
#   1. `/nps/data` submissions per second: `wrk -t1 -c32 -d10s`, each request a new customer's
#      answer (a durable write in the brand's tenant actor), beside the bare axum floor parsing the
#      same JSON (`bare-json-baseline`, POST /v1/logs); RUNS runs each (default 3), medians, ratio.
#   2. the review sync: a local fake store (Python) holding REVIEWS reviews (default 20,000) in
#      pages of 200, both stores; `engage jobs run review_sync` stores them all (first run), then
#      a run with nothing new. Prints reviews stored per second.
#
#   scripts/bench-feedback.sh [REVIEWS=20000] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
reviews=${1:-20000}
runs=${2:-3}
need_wrk
[ -x target/release/engage ] && [ -x target/release/bare-json-baseline ] || cargo build --release --bin engage --bin bare-json-baseline

store_port=$(free_port)
python3 - "$store_port" "$reviews" >/dev/null 2>&1 <<'PY' &
import http.server, json, socketserver, sys, urllib.parse
port, count = int(sys.argv[1]), int(sys.argv[2])
reviews = [{"reviewId": f"r{n:06d}", "reviewer": f"User {n}", "comment": f"Review number {n} of the app",
            "reply": "", "starRating": 1 + n % 5, "createTime": f"2026-{1 + n // 100000:02d}-01T00:00:00Z",
            "lastModified": f"2026-11-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n:06d}Z"}
           for n in range(count, 0, -1)]
class Store(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        start = int(query.get("pageToken") or query.get("cursor") or 0)
        page = reviews[start:start + 200]
        nxt = str(start + 200) if start + 200 < len(reviews) else None
        if url.path.endswith("/reviews"):
            body = {"reviews": page, "nextPageToken": nxt}
        else:
            body = {"data": [{"id": r["reviewId"], "type": "customerReviews", "attributes": {
                "rating": r["starRating"], "body": r["comment"], "reviewerNickname": r["reviewer"],
                "createdDate": r["createTime"], "lastModified": r["lastModified"]}} for r in page], "next": nxt}
        data = json.dumps(body).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def log_message(self, *args): pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", port), Store).serve_forever()
PY
pids+=($!); wait_port "$store_port"

port=$(free_port); data="$work/data"
# one wrk client: the open routes' per-client limit (ENGAGE_OPEN_ROUTES_RATE_LIMIT) is off here
ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" ENGAGE_LOG_LEVEL=warn ENGAGE_OPEN_ROUTES_RATE_LIMIT=0 \
  ENGAGE_STORE_A_URL="http://127.0.0.1:$store_port/a" ENGAGE_STORE_B_URL="http://127.0.0.1:$store_port/b" \
  target/release/engage serve >"$work/engage.log" 2>&1 &
pids+=($!); wait_port "$port"
cli=(env ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" target/release/engage)
staff=$("${cli[@]}" tokens create --kind staff --parent brand-nps)
curl -s -H "token: $staff" -H 'Content-Type: application/json' "http://127.0.0.1:$port/crm_api/save/feedback/config" \
  -d '{"parent_business_id":"brand-nps","feedback_flow":0,"store_a_app_id":"app","store_b_app_id":"app"}' >/dev/null

# 1. /nps/data beside the floor
bare_port=$(free_port)
target/release/bare-json-baseline "127.0.0.1:$bare_port" >/dev/null 2>&1 &
pids+=($!); wait_port "$bare_port"
echo '{"parentBusinessId":"brand-nps","businessId":"o1","mobileNo":"9000000001","rating":9,"order_id":"n-1","questions":[{"q":"Why?","a":"Food"}]}' >"$work/nps.json"
rps() { awk '/Requests\/sec/ {r = $2} /^ +99%/ {p = $2} END {print r " p99=" p}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
engage_runs=(); bare_runs=()
for i in $(seq 1 "$runs"); do
  e=$(wrk -t1 -c32 -d10s --latency -s scripts/bench/nps.lua "http://127.0.0.1:$port" | rps)
  b=$(BODY_FILE="$work/nps.json" wrk -t1 -c32 -d10s --latency -s scripts/bench/post.lua "http://127.0.0.1:$bare_port/v1/logs" | rps)
  echo "run $i: engage /nps/data $e; bare axum parse $b"
  engage_runs+=("${e%% *}"); bare_runs+=("${b%% *}")
done
e=$(printf '%s\n' "${engage_runs[@]}" | median); b=$(printf '%s\n' "${bare_runs[@]}" | median)
python3 -c "import sys; e, b = float(sys.argv[1]), float(sys.argv[2]); print(f'/nps/data medians: engage {e:,.0f} req/s, bare axum {b:,.0f} req/s, ratio {e / b:.2f}')" "$e" "$b"

# 2. the review sync
timed() { local start end out; start=$(date +%s.%N); out=$("${cli[@]}" jobs run review_sync); end=$(date +%s.%N); echo "$out $(echo "$end - $start" | bc)"; }
first=$(timed); second=$(timed)
python3 - "$first" "$second" "$reviews" <<'PY'
import json, sys
def parse(text):
    outcome, seconds = text.rsplit(" ", 1)
    return json.loads(outcome), float(seconds)
(first, s1), (second, s2), count = parse(sys.argv[1]), parse(sys.argv[2]), int(sys.argv[3])
stored = first["a"]["inserted"] + first["b"]["inserted"]
assert stored == 2 * count, first
print(f"review sync, first run: {stored} reviews of two stores ({first['a']['pages'] + first['b']['pages']} pages) in {s1:.2f} s = {stored / s1:,.0f} reviews/s")
print(f"review sync, nothing new: {second['a']['pages'] + second['b']['pages']} pages, {second['a']['read'] + second['b']['read']} reviews read, none written, in {s2:.2f} s")
PY
