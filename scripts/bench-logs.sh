#!/usr/bin/env bash
# Log ingestion throughput: events/s for 1-event and 1000-event requests against engage on the
# embedded sink, beside two baselines measured in the same run: the floor, a bare axum JSON-parse
# server (benches/bare_json_baseline.rs), and a validate-only Node 20 Fastify 5 + AJV server
# (benches/node-baseline) that stores nothing. wrk runs with one thread and CONNECTIONS
# connections on the same box. Prints one line per run, a median table (markdown) and engage's
# peak RSS at the end.
#
#   scripts/bench-logs.sh [DURATION_SECS=10] [RUNS=3] [CONNECTIONS=32]
#
# With PROFILE_DIR set, one more engage run of each body (not counted) is sampled with perf
# (scripts/bench/profile.sh) into PROFILE_DIR/logs-{one,thousand}.{svg,txt}.
#
# Needs wrk (apt-get install wrk; installed here when missing), node and npm (the baseline's
# packages are installed here with `npm ci` when missing) and the release binaries (built here
# when missing). BENCH_ENGAGE overrides the engage binary (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
runs=${2:-3}
connections=${3:-32}

need_wrk
[ -x target/release/engage ] && [ -x target/release/bare-json-baseline ] \
  || cargo build --release --bin engage --bin bare-json-baseline
engage_bin=${BENCH_ENGAGE:-target/release/engage}
[ -d benches/node-baseline/node_modules ] || (cd benches/node-baseline && npm ci --no-audit --no-fund --silent)

python3 - "$work" <<'PY'
import json, sys, datetime
now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
def event(i):
    return {"timestamp": now, "level": "INFO", "product": "edge", "service": "checkout", "component": "api",
            "version": "1.4.2", "environment": "bench", "trace_id": "0b5f6c1e-8d0a-4c4e-9a59-3f3f6a1d2c11",
            "tenant": {"business_id": "b1", "parent_id": "p1"}, "source": "server",
            "message": f"order {i} placed", "context": {"order": i, "amount": 12.5}}
json.dump(event(0), open(f"{sys.argv[1]}/one.json", "w"))
json.dump([event(i) for i in range(1000)], open(f"{sys.argv[1]}/thousand.json", "w"))
PY

base_port=$(free_port)
target/release/bare-json-baseline "127.0.0.1:$base_port" >"$work/baseline.log" 2>&1 &
pids+=($!)
node_port=$(free_port)
node benches/node-baseline/server.js "$node_port" ingress/src/logs/log_ingest_request.schema.json >"$work/node.log" 2>&1 &
pids+=($!)
engage_port=$(free_port)
ENGAGE_HTTP_ADDR="127.0.0.1:$engage_port" ENGAGE_DATA_DIR="$work/data" ENGAGE_LOG_LEVEL=warn \
  "$engage_bin" serve >"$work/engage.log" 2>&1 &
engage_pid=$!
pids+=($engage_pid)
for port in "$base_port" "$node_port" "$engage_port"; do
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.1
  done
done

declare -A results
run() { # name port body events_per_request
  local name=$1 port=$2 body=$3 per=$4 out rps non2xx
  out=$(BODY_FILE="$work/$body" wrk -t1 -c"$connections" --latency -d"${duration}s" -s scripts/bench/post.lua "http://127.0.0.1:$port/v1/logs")
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  local eps
  eps=$(python3 -c "print(round($rps * $per))")
  echo "run: $name body=$body requests/s=$rps events/s=$eps non-2xx=${non2xx:-0} latency: $(awk '/^    Latency/ {print $2, "avg", $4, "max"}' <<<"$out") p50 $(awk '$1 == "50%" {print $2}' <<<"$out") p99 $(awk '$1 == "99%" {print $2}' <<<"$out")"
  [ -z "${non2xx:-}" ] || { echo "non-2xx answers: the run is invalid" >&2; exit 1; }
  results["$name/$body"]+="$eps "
}

# warm-up
wait_port "$engage_port" || { cat "$work/engage.log"; exit 1; }
BODY_FILE="$work/one.json" wrk -t1 -c4 -d2s -s scripts/bench/post.lua "http://127.0.0.1:$engage_port/v1/logs" >/dev/null
for _ in $(seq 1 "$runs"); do
  for body in one.json thousand.json; do
    per=1; [ "$body" = thousand.json ] && per=1000
    run baseline "$base_port" "$body" "$per"
    run node "$node_port" "$body" "$per"
    run engage "$engage_port" "$body" "$per"
  done
done

if [ -n "${PROFILE_DIR:-}" ]; then
  mkdir -p "$PROFILE_DIR"
  for body in one.json thousand.json; do
    BODY_FILE="$work/$body" wrk -t1 -c"$connections" -d"${duration}s" -s scripts/bench/post.lua "http://127.0.0.1:$engage_port/v1/logs" >/dev/null &
    load=$!
    sleep 1
    scripts/bench/profile.sh "$engage_pid" $((duration - 2)) "$PROFILE_DIR/logs-${body%.json}.svg"
    wait "$load"
  done
fi

echo
echo "| request size | floor: bare axum JSON parse (events/s) | Node/Fastify+AJV (events/s) | engage embedded sink (events/s) | engage / floor | engage / Node |"
echo "|---|---|---|---|---|---|"
for body in one.json thousand.json; do
  b=$(median "${results[baseline/$body]}")
  n=$(median "${results[node/$body]}")
  e=$(median "${results[engage/$body]}")
  label="1 event"; [ "$body" = thousand.json ] && label="1000 events"
  echo "| $label | $b | $n | $e | $(python3 -c "print(f'{$e/$b:.2f}')") | $(python3 -c "print(f'{$e/$n:.2f}')") |"
done
echo
echo "stored events: $(curl -s "http://127.0.0.1:$engage_port/metrics" | awk '/^engage_log_events_total\{outcome="accepted"\}/ {print $2}')"
echo "engage peak RSS: $(awk '/VmHWM/ {print $2, $3}' "/proc/$engage_pid/status")"
