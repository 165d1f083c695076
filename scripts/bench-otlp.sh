#!/usr/bin/env bash
# OTLP logs input against the JSON route, side by side on one engage (embedded sink), in one run:
# events/s for 1000-record OTLP protobuf exports to POST /otlp/v1/logs and 1000-event JSON arrays
# to POST /v1/logs, alternating run by run. The bodies carry the same events: the OTLP records are
# built with the OpenTelemetry Python SDK's own protobuf classes (opentelemetry-proto), with the
# resource attributes a service sets once (service.name, product, version, environment) and per
# record a body, severity, trace and span ids and two attributes. Prints one line per run, a
# median table (markdown) and engage's peak RSS.
#
#   scripts/bench-otlp.sh [DURATION_SECS=10] [RUNS=3] [CONNECTIONS=32]
#
# Needs wrk (installed when missing), the OpenTelemetry Python packages (installed when missing)
# and the release binary (built when missing). BENCH_ENGAGE overrides the engage binary.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
runs=${2:-3}
connections=${3:-32}

need_wrk
python3 -c 'import opentelemetry.proto.collector.logs.v1.logs_service_pb2' 2>/dev/null \
  || python3 -m pip install --quiet 'opentelemetry-exporter-otlp-proto-http>=1.30'
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}

python3 - "$work" <<'PY'
import datetime, json, sys, time
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, InstrumentationScope
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

now_ns = time.time_ns()
now = datetime.datetime.fromtimestamp(now_ns / 1e9, datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
def event(i):
    return {"timestamp": now, "level": "INFO", "product": "edge", "service": "checkout", "component": "api",
            "version": "1.4.2", "environment": "bench", "trace_id": "0b5f6c1e8d0a4c4e9a593f3f6a1d2c11",
            "tenant": {"business_id": "b1", "parent_id": "p1"}, "source": "server",
            "message": f"order {i} placed", "context": {"order": i, "amount": 12.5}}
json.dump([event(i) for i in range(1000)], open(f"{sys.argv[1]}/thousand.json", "w"))

def kv(key, value):
    if isinstance(value, str):
        return KeyValue(key=key, value=AnyValue(string_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(int_value=value))
resource = Resource(attributes=[kv("service.name", "checkout"), kv("product", "edge"), kv("service.version", "1.4.2"),
                                kv("deployment.environment", "bench"), kv("tenant.business_id", "b1"),
                                kv("tenant.parent_id", "p1")])
records = [LogRecord(time_unix_nano=now_ns, observed_time_unix_nano=now_ns, severity_number=9, severity_text="INFO",
                     body=AnyValue(string_value=f"order {i} placed"), attributes=[kv("order", i), kv("amount", 12.5)],
                     trace_id=bytes.fromhex("0b5f6c1e8d0a4c4e9a593f3f6a1d2c11"), span_id=bytes.fromhex("9a593f3f6a1d2c11"))
           for i in range(1000)]
request = ExportLogsServiceRequest(resource_logs=[ResourceLogs(resource=resource, scope_logs=[
    ScopeLogs(scope=InstrumentationScope(name="api"), log_records=records)])])
open(f"{sys.argv[1]}/thousand.pb", "wb").write(request.SerializeToString())
PY
echo "bodies: thousand.json $(stat -c %s "$work/thousand.json") bytes, thousand.pb $(stat -c %s "$work/thousand.pb") bytes"

engage_port=$(free_port)
ENGAGE_HTTP_ADDR="127.0.0.1:$engage_port" ENGAGE_DATA_DIR="$work/data" ENGAGE_LOG_LEVEL=warn \
  "$engage_bin" serve >"$work/engage.log" 2>&1 &
engage_pid=$!
pids+=($engage_pid)
wait_port "$engage_port" || { cat "$work/engage.log"; exit 1; }

declare -A results
run() { # name path body content-type
  local name=$1 path=$2 body=$3 type=$4 out rps non2xx eps
  out=$(BODY_FILE="$work/$body" CONTENT_TYPE="$type" wrk -t1 -c"$connections" --latency -d"${duration}s" \
    -s scripts/bench/post.lua "http://127.0.0.1:$engage_port$path")
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  eps=$(python3 -c "print(round($rps * 1000))")
  echo "run: $name requests/s=$rps events/s=$eps non-2xx=${non2xx:-0} p50 $(awk '$1 == "50%" {print $2}' <<<"$out") p99 $(awk '$1 == "99%" {print $2}' <<<"$out")"
  [ -z "${non2xx:-}" ] || { echo "non-2xx answers: the run is invalid" >&2; exit 1; }
  results["$name"]+="$eps "
}

# each body once by hand: the OTLP export must be taken whole (no partialSuccess)
answer=$(curl -s -H 'content-type: application/x-protobuf' --data-binary "@$work/thousand.pb" "http://127.0.0.1:$engage_port/otlp/v1/logs" | od -An -tx1 | tr -d ' \n')
[ -z "$answer" ] || { echo "the OTLP export was answered with a partial success: $answer" >&2; exit 1; }
# warm-up
BODY_FILE="$work/thousand.json" wrk -t1 -c4 -d2s -s scripts/bench/post.lua "http://127.0.0.1:$engage_port/v1/logs" >/dev/null
for _ in $(seq 1 "$runs"); do
  run json /v1/logs thousand.json application/json
  run otlp-protobuf /otlp/v1/logs thousand.pb application/x-protobuf
done

j=$(median "${results[json]}")
o=$(median "${results[otlp-protobuf]}")
echo
echo "| 1000 events per request | events/s (median of $runs) | runs | / JSON |"
echo "|---|---|---|---|"
echo "| JSON array, POST /v1/logs | $j | ${results[json]}| 1.00 |"
echo "| OTLP protobuf, POST /otlp/v1/logs | $o | ${results[otlp-protobuf]}| $(python3 -c "print(f'{$o/$j:.2f}')") |"
echo
echo "stored events: $(metric "$engage_port" engage_log_events_total)"
echo "engage peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$engage_pid/status")"
