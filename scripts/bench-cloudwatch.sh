#!/usr/bin/env bash
# CloudWatch sink batching: CONNECTIONS concurrent single-event producers POST /v1/logs to engage
# with the CloudWatch sink pointed at moto_server (a real CloudWatch Logs API, here on loopback).
# Prints events per PutLogEvents call (engage_log_batch_events: events / calls), the request rate
# and latency, PutLogEvents latency (engage_log_sink_latency_seconds), and engage's peak RSS.
#
#   scripts/bench-cloudwatch.sh [DURATION_SECS=10] [RUNS=3] [CONNECTIONS=32]
#
# Needs wrk and moto_server (`pip install 'moto[server]'`; installed here when missing).
# BENCH_ENGAGE overrides the engage binary (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
runs=${2:-3}
connections=${3:-32}

need_wrk
command -v moto_server >/dev/null || python3 -m pip install --quiet 'moto[server]'
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}

python3 - "$work" <<'PY'
import json, sys, datetime
now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
json.dump({"timestamp": now, "level": "INFO", "product": "edge", "service": "checkout", "component": "api",
           "version": "1.4.2", "environment": "bench", "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11",
           "tenant": {"business_id": "b1", "parent_id": "p1"}, "source": "server",
           "message": "order placed", "context": {"order": 1, "amount": 12.5}}, open(f"{sys.argv[1]}/one.json", "w"))
PY


for run in $(seq 1 "$runs"); do
  moto_port=$(free_port)
  moto_server -H 127.0.0.1 -p "$moto_port" >"$work/moto-$run.log" 2>&1 &
  moto_pid=$!; pids+=($moto_pid)
  wait_port "$moto_port"
  port=$(free_port)
  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1 \
    ENGAGE_LOG_SINK=cloudwatch ENGAGE_CLOUDWATCH_ENDPOINT="http://127.0.0.1:$moto_port" \
    ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$work/data-$run" ENGAGE_LOG_LEVEL=warn \
    "$engage_bin" serve >"$work/engage-$run.log" 2>&1 &
  pid=$!; pids+=($pid)
  wait_port "$port" || { cat "$work/engage-$run.log"; exit 1; }
  # warm-up: creates the log group and stream
  BODY_FILE="$work/one.json" wrk -t1 -c1 -d1s -s scripts/bench/post.lua "http://127.0.0.1:$port/v1/logs" >/dev/null
  calls0=$(metric "$port" engage_log_batch_events_count %.6f); events0=$(metric "$port" engage_log_batch_events_sum %.6f)
  sink_n0=$(metric "$port" engage_log_sink_latency_seconds_count %.6f); sink_s0=$(metric "$port" engage_log_sink_latency_seconds_sum %.6f)
  out=$(BODY_FILE="$work/one.json" wrk -t1 -c"$connections" -d"${duration}s" --latency -s scripts/bench/post.lua "http://127.0.0.1:$port/v1/logs")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  [ -z "${non2xx:-}" ] || { echo "non-2xx answers: the run is invalid" >&2; echo "$out" >&2; exit 1; }
  calls=$(metric "$port" engage_log_batch_events_count %.6f); events=$(metric "$port" engage_log_batch_events_sum %.6f)
  sink_n=$(metric "$port" engage_log_sink_latency_seconds_count %.6f); sink_s=$(metric "$port" engage_log_sink_latency_seconds_sum %.6f)
  python3 - "$out" "$calls0" "$calls" "$events0" "$events" "$sink_n0" "$sink_n" "$sink_s0" "$sink_s" "$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")" <<'PY'
import sys, re
out = sys.argv[1]
c0, c1, e0, e1, n0, n1, s0, s1, rss = map(float, sys.argv[2:])
rps = re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)
p50 = re.search(r"\s50%\s+(\S+)", out).group(1)
p99 = re.search(r"\s99%\s+(\S+)", out).group(1)
calls, events = c1 - c0, e1 - e0
print(f"run: requests/s={rps} p50={p50} p99={p99} put_log_events_calls={calls:.0f} events={events:.0f} "
      f"events_per_call={events / max(calls, 1):.1f} call_ms={(s1 - s0) / max(n1 - n0, 1) * 1000:.1f} peak_rss_kb={rss:.0f}")
PY
  kill "$pid" "$moto_pid"; wait "$pid" "$moto_pid" 2>/dev/null || true
done
