#!/usr/bin/env bash
# Re-measures every hot path of BENCHMARKS.md on this machine in one run, one after another (each
# script alternates engage and its baselines run by run), and prints the page's tables: per hot
# path, the script's median table with its same-run baseline and ratio, headed by the command that
# reproduces it, the machine and the commit.
#
#   scripts/bench-all.sh [DURATION_SECS=5] [RUNS=3] [CONNECTIONS=32]
#
# ONLY (space-separated: logs otlp cloudwatch orders redeem brands soak) picks hot paths;
# SOAK_SECS (default 60) is the soak's length. Each script's whole output is kept in
# $BENCH_ALL_DIR (default target/bench-all/<commit>/<path>.txt). Takes about 20 minutes with the
# defaults on 2 cores. The release binaries are built first when missing; build them at the
# commit you mean to measure (`cargo build --release --bin engage --bin bare-json-baseline
# --bin jetstream-publish`).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-5}
runs=${2:-3}
connections=${3:-32}
paths=${ONLY:-logs otlp cloudwatch orders redeem brands soak}
commit=$(git rev-parse --short HEAD)
out=${BENCH_ALL_DIR:-target/bench-all/$commit}
mkdir -p "$out"
[ -x target/release/engage ] && [ -x target/release/bare-json-baseline ] && [ -x target/release/jetstream-publish ] \
  || cargo build --release --bin engage --bin bare-json-baseline --bin jetstream-publish
cores=$(nproc)
memory=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
machine="$cores cores ($cpu), $memory"

# hot path -> the command that measures it
declare -A command=(
  [logs]="scripts/bench-logs.sh $duration $runs $connections"
  [otlp]="scripts/bench-otlp.sh $duration $runs $connections"
  [cloudwatch]="scripts/bench-cloudwatch.sh $duration $runs $connections"
  [orders]="MODES='embedded jetstream jetstream-paced jetstream-r3' scripts/bench-orders.sh $duration $runs $connections"
  [redeem]="MODES='embedded jetstream jetstream-r3' scripts/bench-redeem.sh $duration $runs $connections"
  [brands]="scripts/bench-brands.sh $duration $connections"
  [soak]="scripts/bench-soak.sh ${SOAK_SECS:-60} $connections"
)
declare -A title=(
  [logs]="Log ingestion (1 and 1000 events per request, embedded sink)"
  [otlp]="OTLP logs beside the JSON route"
  [cloudwatch]="The CloudWatch sink (moto_server)"
  [orders]="Orders: embedded and cluster (JetStream + NATS KV)"
  [redeem]="Redemptions (p50/p99)"
  [brands]="Many brands on one node"
  [soak]="Soak (memory under sustained load)"
)

echo "# engage hot paths, commit $commit, $(date -u +%Y-%m-%d), $machine"
for path in $paths; do
  [ -n "${command[$path]:-}" ] || { echo "unknown hot path: $path" >&2; exit 2; }
  echo
  echo "## ${title[$path]}"
  echo
  echo "\`${command[$path]}\`, commit \`$commit\`, $machine"
  echo
  started=$(date +%s)
  if ! bash -c "${command[$path]}" >"$out/$path.txt" 2>&1; then
    echo "**failed** (see $out/$path.txt):"
    tail -5 "$out/$path.txt" | sed 's/^/    /'
    continue
  fi
  # the script's summary: its markdown tables and the lines after them, or (the soak, many
  # brands) its summary lines
  if grep -q '^|' "$out/$path.txt"; then
    awk '/^\|/ {table = 1} table' "$out/$path.txt"
  else
    grep -E '^(median|soak|round=|t=|run: .*peak)' "$out/$path.txt" | sed 's/^/    /'
  fi
  echo
  echo "($(($(date +%s) - started)) s; whole output: $out/$path.txt)"
done
