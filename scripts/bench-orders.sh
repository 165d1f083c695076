#!/usr/bin/env bash
# Order ingestion throughput: single-order POSTs per second to /injestion/platform, on the embedded
# bus and on NATS JetStream, beside a raw JetStream publish baseline (benches/jetstream_publish.rs:
# publish + awaited ack, same concurrency) measured in the same run; and the processing lag under
# that load (publish -> processed, from engage_processing_lag_seconds) plus the time to drain the
# backlog after the load stops.
#
#   scripts/bench-orders.sh [DURATION_SECS=10] [RUNS=3] [CONNECTIONS=32]
#
# BENCH_ENGAGE overrides the engage binary (to compare two builds); MODES (default
# "embedded jetstream jetstream-paced") picks the modes (`jetstream-r3`: a three-server cluster on
# loopback with ENGAGE_NATS_REPLICAS=3, beside `jetstream`, one server; `jetstream-paced`: one
# server at PACED_FRACTION (default 0.5) of the embedded mode's orders/s measured just before in
# the same round, the rate held by scripts/bench/pace.lua as wrk2's -R holds one: the lag at that
# rate; `jetstream-r3-paced`: the same on three servers); PROFILE_DIR samples engage with perf during the first run
# of each mode (scripts/bench/profile.sh) into PROFILE_DIR/orders-<mode>.{svg,txt}. CAPTURE=1 also
# prints each run's `wire … p99=…`: each POST's own latency (scripts/bench/common.sh, capture_start).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-10}
runs=${2:-3}
connections=${3:-32}

need_wrk
need_capture
nats_bin=$(nats_server_bin)
[ -x target/release/engage ] && [ -x target/release/jetstream-publish ] || cargo build --release --bin engage --bin jetstream-publish
engage_bin=${BENCH_ENGAGE:-target/release/engage}
modes=${MODES:-embedded jetstream jetstream-paced}

lag_quantiles() { # port -> "p50 p99" in ms, interpolated from the histogram buckets
  buckets "$1" engage_processing_lag_seconds 'le=' | python3 -c '
import sys
buckets = sorted((float("inf") if le == "+Inf" else float(le), float(n)) for le, n in (line.split() for line in sys.stdin))
total = buckets[-1][1] if buckets else 0
def q(p):
    target, prev_le, prev_n = p * total, 0.0, 0
    for le, n in buckets:
        if n >= target:
            if le == float("inf"): return prev_le * 1000
            frac = (target - prev_n) / (n - prev_n) if n > prev_n else 1
            return (prev_le + (le - prev_le) * frac) * 1000
        prev_le, prev_n = le, n
    return 0
print(f"{q(0.5):.1f} {q(0.99):.1f}")'
}

declare -A results
run_engage() { # mode run
  local mode=$1 run=$2 port data env=() out rps ingested processed start drain lag
  port=$(free_port); data="$work/data-$mode-$run"
  local rate=0 nats_pids=()
  if [ "${mode%-paced}" != "$mode" ]; then
    local embedded_rps; embedded_rps=$(awk '{print $NF}' <<<"${results[embedded/rps]:-}")
    [ -n "$embedded_rps" ] || { echo "$mode: needs the embedded mode before it in MODES (its rate is a fraction of it)" >&2; exit 1; }
    rate=$(python3 -c "print(round(${PACED_FRACTION:-0.5} * float('$embedded_rps')))")
  fi
  if [ "$mode" = jetstream ] || [ "$mode" = jetstream-paced ]; then
    local nport; nport=$(free_port)
    "$nats_bin" -js -a 127.0.0.1 -p "$nport" -sd "$work/nats-$run" >/dev/null 2>&1 &
    pids+=($!); nats_pids=($!); wait_port "$nport"
    env=(ENGAGE_NATS_URL="nats://127.0.0.1:$nport")
    nats_url="nats://127.0.0.1:$nport"
  elif [ "$mode" = jetstream-r3 ] || [ "$mode" = jetstream-r3-paced ]; then
    # three servers routed into one cluster; every stream and bucket with three replicas
    start_nats_cluster "$nats_bin" "r3-$run"
    local urls=$nats_urls
    nats_pids=("${nats_cluster_pids[@]}")
    env=(ENGAGE_NATS_URL="$urls" ENGAGE_NATS_REPLICAS=3)
    nats_url="$urls"
  fi
  env "${env[@]}" ENGAGE_HTTP_ADDR="127.0.0.1:$port" ENGAGE_DATA_DIR="$data" ENGAGE_LOG_LEVEL=warn "$engage_bin" serve >"$work/engage-$mode-$run.log" 2>&1 &
  local pid=$!; pids+=($pid); wait_port "$port"
  # a cluster elects its JetStream leaders first: wait for /readyz
  for _ in $(seq 1 600); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/readyz', timeout=1)" 2>/dev/null && break
    sleep 0.1
  done
  sleep 1
  local profiler=
  if [ -n "${PROFILE_DIR:-}" ] && [ "$run" = 1 ]; then
    mkdir -p "$PROFILE_DIR"
    (sleep 1; scripts/bench/profile.sh "$pid" $((duration - 2)) "$PROFILE_DIR/orders-$mode.svg") &
    profiler=$!
  fi
  local wire= cpu_engage cpu_nats=0
  cpu_engage=$(cpu_seconds "$pid")
  [ ${#nats_pids[@]} -eq 0 ] || cpu_nats=$(cpu_seconds "${nats_pids[@]}")
  [ -z "${CAPTURE:-}" ] || capture_start "$port" "$work/orders.pcap"
  out=$(PACE_RATE=$rate THREADS=2 RUN_ID="$mode$run" wrk -t2 -c"$connections" -d"${duration}s" -s scripts/bench/orders.lua "http://127.0.0.1:$port")
  [ -z "${CAPTURE:-}" ] || wire=" $(capture_wire "$port" "$work/orders.pcap")"
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  local non2xx; non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  [ -z "${non2xx:-}" ] || { echo "$mode: $non2xx non-2xx answers: the run is invalid" >&2; echo "$out" >&2; exit 1; }
  ingested=$(metric "$port" engage_ingested_total)
  start=$(date +%s.%N)
  local deadline=$((SECONDS + 300))
  while :; do
    processed=$(metric "$port" engage_events_processed_total)
    [ "$processed" -ge "$ingested" ] && break
    [ "$SECONDS" -lt "$deadline" ] || { echo "$mode: only $processed of $ingested orders processed after 300 s" >&2; exit 1; }
    sleep 0.05
  done
  drain=$(python3 -c "print(f'{($(date +%s.%N) - $start) * 1000:.0f}')")
  lag=$(lag_quantiles "$port")
  # CPU per 1,000 orders over the load and the drain: engage, and nats-server (all of them)
  local ecpu ncpu=0 per_k
  per_k=$(python3 -c "print(max($ingested, 1) / 1000)")
  ecpu=$(python3 -c "print(round(($(cpu_seconds "$pid") - $cpu_engage) * 1000 / $per_k))")
  [ ${#nats_pids[@]} -eq 0 ] || ncpu=$(python3 -c "print(round(($(cpu_seconds "${nats_pids[@]}") - $cpu_nats) * 1000 / $per_k))")
  local cost="engage_cpu_ms_per_1k=$ecpu nats_cpu_ms_per_1k=$ncpu"
  local rss; rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  [ -z "$profiler" ] || wait "$profiler"
  echo "run: $mode #$run set_rate=$rate peak_rss_kb=$rss orders/s=$rps ingested=$ingested processed=$processed drain_ms=$drain lag_p50_ms=${lag% *} lag_p99_ms=${lag#* } $cost latency: $(awk '/^    Latency/ {print $2, "avg", $4, "max"}' <<<"$out")$wire"
  results["$mode/rps"]+="$rps "; results["$mode/p50"]+="${lag% *} "; results["$mode/p99"]+="${lag#* } "; results["$mode/drain"]+="$drain "
  results["$mode/ecpu"]+="$ecpu "; results["$mode/ncpu"]+="$ncpu "
  if [ "$mode" = jetstream ]; then
    local raw; raw=$(target/release/jetstream-publish "$nats_url" "$duration" "$connections" | sed 's/msgs_per_sec=//')
    echo "run: raw-jetstream-publish #$run msgs/s=$raw"
    results["raw/rps"]+="$raw "
  fi
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

for run in $(seq 1 "$runs"); do
  for mode in $modes; do run_engage "$mode" "$run"; done
done

raw=$(median "${results[raw/rps]:-0}")
embedded=$(median "${results[embedded/rps]:-0}")
ratio() { python3 -c "print(f'{$1/$2:.2f}' if $2 else '-')"; }
echo
echo "| mode | single-order POSTs/s | vs raw JetStream publish | vs embedded | lag p50 (ms) | lag p99 (ms) | drain after load (ms) | CPU ms per 1,000 orders: engage + nats-server |"
echo "|---|---|---|---|---|---|---|---|"
echo "| raw JetStream publish (baseline) | $raw | 1.00 | - | - | - | - | - |"
for mode in $modes; do
  r=$(median "${results[$mode/rps]}")
  echo "| engage, $mode | $r | $(ratio "$r" "$raw") | $(ratio "$r" "$embedded") | $(median "${results[$mode/p50]}") | $(median "${results[$mode/p99]}") | $(median "${results[$mode/drain]}") | $(median "${results[$mode/ecpu]}") + $(median "${results[$mode/ncpu]}") |"
done
