#!/usr/bin/env bash
# What a node costs, so operators can size a cluster (issue 65, docs/operations.md "Sizing a
# cluster"). Three nats-servers routed into one cluster on loopback (every stream and bucket with
# three replicas), one ingress and N actor nodes (N = 1, 2, 3 by default), 16 partitions; wrk
# posts single orders through the ingress for DURATION seconds at CONNECTIONS concurrent
# connections; then the script waits until every order was processed and prints, per N, the CPU
# seconds per 1,000 orders of the actor nodes together, of the ingress and of the three
# nats-servers together (from /proc/<pid>/stat, user + system, over the load and the drain).
#
#   scripts/bench-cluster-cost.sh [DURATION_SECS=15] [CONNECTIONS=8]
#
# NODE_COUNTS (default "1 2 3") picks the cluster sizes; BENCH_ENGAGE overrides the binary.
# These machines have 2 cores: the figures are costs, not a throughput that grows with nodes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
duration=${1:-15}
connections=${2:-8}
node_counts=${NODE_COUNTS:-1 2 3}

need_wrk
nats_bin=$(nats_server_bin)
[ -x target/release/engage ] || cargo build --release --bin engage
engage_bin=${BENCH_ENGAGE:-target/release/engage}

wait_ready() { # port
  for _ in $(seq 1 600); do
    python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$1/readyz', timeout=1)" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "engage on port $1 never became ready" >&2
  exit 1
}

echo "| actor nodes | orders | orders/s | actor nodes CPU s / 1,000 orders | ingress CPU s / 1,000 | nats-servers (3) CPU s / 1,000 | total CPU s / 1,000 |"
echo "|---|---|---|---|---|---|---|"
for nodes in $node_counts; do
  # a fresh three-server cluster for each size
  start_nats_cluster "$nats_bin" "$nodes"
  urls=$nats_urls; nats_pids=("${nats_cluster_pids[@]}")
  common=(ENGAGE_NATS_URL="$urls" ENGAGE_NATS_REPLICAS=3 ENGAGE_PARTITIONS=16 ENGAGE_LOG_LEVEL=warn)
  node_pids=(); node_ports=()
  for n in $(seq 1 "$nodes"); do
    port=$(free_port)
    env "${common[@]}" ENGAGE_ROLE=node ENGAGE_NODE_ID="node-$n" ENGAGE_HTTP_ADDR="127.0.0.1:$port" \
      ENGAGE_DATA_DIR="$work/node-$nodes-$n" "$engage_bin" serve >"$work/node-$nodes-$n.log" 2>&1 &
    node_pids+=($!); pids+=($!); node_ports+=("$port")
    wait_port "$port"; wait_ready "$port"
  done
  iport=$(free_port)
  env "${common[@]}" ENGAGE_ROLE=ingress ENGAGE_HTTP_ADDR="127.0.0.1:$iport" ENGAGE_DATA_DIR="$work/ingress-$nodes" \
    "$engage_bin" serve >"$work/ingress-$nodes.log" 2>&1 &
  ingress_pid=$!; pids+=($!)
  wait_port "$iport"; wait_ready "$iport"
  # every node holds its share before the load (each is ready once it processes a partition)
  sleep 3

  before_nodes=$(cpu_seconds "${node_pids[@]}")
  before_ingress=$(cpu_seconds "$ingress_pid")
  before_nats=$(cpu_seconds "${nats_pids[@]}")
  out=$(RUN_ID="cost$nodes" wrk -t2 -c"$connections" -d"${duration}s" -s scripts/bench/orders.lua "http://127.0.0.1:$iport")
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  [ -z "${non2xx:-}" ] || { echo "$nodes nodes: $non2xx non-2xx answers: the run is invalid" >&2; echo "$out" >&2; exit 1; }
  ingested=$(metric "$iport" engage_ingested_total)
  deadline=$((SECONDS + 300))
  while :; do
    processed=0
    for port in "${node_ports[@]}"; do processed=$((processed + $(metric "$port" engage_events_processed_total))); done
    [ "$processed" -ge "$ingested" ] && break
    [ "$SECONDS" -lt "$deadline" ] || { echo "$nodes nodes: only $processed of $ingested processed after 300 s" >&2; exit 1; }
    sleep 0.1
  done
  after_nodes=$(cpu_seconds "${node_pids[@]}")
  after_ingress=$(cpu_seconds "$ingress_pid")
  after_nats=$(cpu_seconds "${nats_pids[@]}")
  python3 - "$nodes" "$ingested" "$rps" "$before_nodes" "$after_nodes" "$before_ingress" "$after_ingress" "$before_nats" "$after_nats" <<'PY'
import sys
nodes, orders, rps = sys.argv[1], int(sys.argv[2]), sys.argv[3]
bn, an, bi, ai, bs, as_ = map(float, sys.argv[4:])
per = lambda spent: spent / orders * 1000
n, i, s = per(an - bn), per(ai - bi), per(as_ - bs)
print(f"| {nodes} | {orders} | {rps} | {n:.3f} | {i:.3f} | {s:.3f} | {n + i + s:.3f} |")
PY
  for pid in "${node_pids[@]}" "$ingress_pid" "${nats_pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
done
