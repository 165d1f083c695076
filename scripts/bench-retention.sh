#!/usr/bin/env bash
# The log routes with the embedded log's expiry task running beside them (issue 44), against the
# same routes without it, in one run: two engage processes on the embedded sink, runs alternating.
#
# - "without": ENGAGE_LOG_RETENTION_DAYS=0 and ENGAGE_LOG_EXPIRY_INTERVAL_SECS=86400 (the task's
#   one pass at start finds nothing to do), 64 MiB segments (the default);
# - "with": ENGAGE_LOG_RETENTION_DAYS=1, a pass every second, 1 MiB segments (so the log grows
#   by dozens of segments a second under this load and each pass walks them all), and 64 MiB of
#   3-day-old events written before the runs, which the passes delete while the load runs.
#
# Prints one line per run (events/s for 1-event and 1000-event requests), a median table and
# how many segments the "with" process deleted.
#
#   scripts/bench-retention.sh [DURATION_SECS=10] [RUNS=3] [CONNECTIONS=32]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
runs=${2:-3}
connections=${3:-32}

need_wrk
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}

python3 - "$work" <<'PY'
import json, sys, datetime
def stamp(days):
    t = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=days)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
def event(i, days=0):
    return {"timestamp": stamp(days), "level": "INFO", "product": "edge", "service": "checkout", "component": "api",
            "version": "1.4.2", "environment": "bench", "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11",
            "tenant": {"business_id": "b1", "parent_id": "p1"}, "source": "server",
            "message": f"order {i} placed", "context": {"order": i, "amount": 12.5}}
json.dump(event(0), open(f"{sys.argv[1]}/one.json", "w"))
json.dump([event(i) for i in range(1000)], open(f"{sys.argv[1]}/thousand.json", "w"))
json.dump([event(i, 3) for i in range(1000)], open(f"{sys.argv[1]}/old.json", "w"))
PY

start() { # name port env...
  local name=$1 port=$2
  shift 2
  env ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/$name" ENGAGE_LOG_LEVEL=warn "$@" \
    "$engage_bin" serve >"$work/$name.log" 2>&1 &
  pids+=($!)
  wait_port "$port" || { cat "$work/$name.log"; exit 1; }
}
without_port=$(free_port)
start without "$without_port" ENGAGE_LOG_RETENTION_DAYS=0 ENGAGE_LOG_EXPIRY_INTERVAL_SECS=86400
with_port=$(free_port)
start with "$with_port" ENGAGE_LOG_RETENTION_DAYS=1 ENGAGE_LOG_EXPIRY_INTERVAL_SECS=1 ENGAGE_LOG_SEGMENT_BYTES=1048576 \
  ENGAGE_LOG_MIN_FREE_BYTES=268435456
# 3-day-old events for the passes to delete while the load runs (about 64 MiB)
for port in "$with_port"; do
  BODY_FILE="$work/old.json" wrk -t1 -c4 -d4s -s scripts/bench/post.lua "http://127.0.0.1:$port/v1/logs" >/dev/null
done

declare -A results
run() { # name port body per
  local name=$1 port=$2 body=$3 per=$4 out rps non2xx eps
  out=$(BODY_FILE="$work/$body" wrk -t1 -c"$connections" -d"${duration}s" -s scripts/bench/post.lua "http://127.0.0.1:$port/v1/logs")
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  eps=$(python3 -c "print(round($rps * $per))")
  echo "run: $name body=$body events/s=$eps non-2xx=${non2xx:-0} segments deleted so far: $(metric "$port" engage_log_segments_deleted_total)"
  [ -z "${non2xx:-}" ] || { echo "non-2xx answers: the run is invalid" >&2; exit 1; }
  results["$name/$body"]+="$eps "
}
for _ in $(seq 1 "$runs"); do
  for body in one.json thousand.json; do
    per=1; [ "$body" = thousand.json ] && per=1000
    run without "$without_port" "$body" "$per"
    run with "$with_port" "$body" "$per"
  done
done

echo
echo "| request size | without expiry (events/s) | with expiry every 1 s (events/s) | with / without |"
echo "|---|---|---|---|"
for body in one.json thousand.json; do
  a=$(median "${results[without/$body]}")
  b=$(median "${results[with/$body]}")
  label="1 event"; [ "$body" = thousand.json ] && label="1000 events"
  echo "| $label | $a | $b | $(python3 -c "print(f'{$b/$a:.2f}')") |"
done
echo
echo "with: segments deleted $(metric "$with_port" engage_log_segments_deleted_total), segments now $(metric "$with_port" engage_log_segments), disk $(metric "$with_port" engage_log_disk_bytes %.0f) bytes"
