#!/usr/bin/env bash
# Group reads of the embedded log sink over many interleaved streams: single events POSTed to 32
# log streams of one group (component api-0 … api-31) for DURATION seconds, then
# GET /v1/logs/events?log_group=… (no log_stream: every stream merged by time) timed with curl,
# RUNS times each at limit 100 and 10000.
#
#   scripts/bench-log-reads.sh [DURATION_SECS=20] [RUNS=3]
#
# BENCH_ENGAGE overrides the engage binary (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-20}
runs=${2:-3}
engage_bin=${BENCH_ENGAGE:-target/release/engage}

need_wrk
[ -n "${BENCH_ENGAGE:-}" ] || [ -x target/release/engage ] || cargo build --release --bin engage

python3 - "$work" <<'PY'
import json, sys, datetime
now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
event = {"timestamp": now, "level": "INFO", "product": "edge", "service": "checkout", "component": "COMPONENT",
         "version": "1.4.2", "environment": "bench", "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11",
         "tenant": {"business_id": "b1", "parent_id": "p1"}, "source": "server",
         "message": "order 1 placed", "context": {"order": 1, "amount": 12.5}}
json.dump(event, open(f"{sys.argv[1]}/one.json", "w"))
PY

port=$(free_port)
ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/data" ENGAGE_LOG_LEVEL=warn \
  "$engage_bin" serve >"$work/engage.log" 2>&1 &
pids+=($!)
wait_port "$port"
written=$(BODY_FILE="$work/one.json" wrk -t1 -c32 -d"${duration}s" -s scripts/bench/streams.lua \
  "http://127.0.0.1:$port/v1/logs" | awk '/requests in/ {print $1}')
echo "written: $written events in 32 streams, $(ls "$work/data/logs" | wc -l) segments"
group=%2Flogs%2Forg%2Fedge%2Fcheckout
for limit in 100 10000; do
  for run in $(seq 1 "$runs"); do
    out=$(curl -s -o "$work/read.json" -w "%{http_code} %{time_total}" \
      "http://127.0.0.1:$port/v1/logs/events?log_group=$group&limit=$limit")
    got=$(python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))['events']))" "$work/read.json")
    echo "run: group read limit=$limit #$run status=${out% *} events=$got seconds=${out#* }"
  done
done
