#!/usr/bin/env bash
# Samples a running process with perf for a while and writes a flame graph SVG (inferno) and the
# top of `perf report` beside it. The benches call it when PROFILE_DIR is set; by hand:
#
#   scripts/bench/profile.sh PID SECONDS OUT.svg
#
# Needs perf and inferno (`cargo install inferno`; installed here when missing).
set -euo pipefail
pid=$1 seconds=$2 out=$3
command -v inferno-flamegraph >/dev/null \
  || cargo install --quiet inferno --no-default-features --features cli,multithreaded
data=$(mktemp)
perf record -F 99 --call-graph dwarf,16384 -p "$pid" -o "$data" -- sleep "$seconds" 2>/dev/null
perf script -i "$data" 2>/dev/null | inferno-collapse-perf | inferno-flamegraph --title "$(basename "$out" .svg)" >"$out"
perf report -i "$data" --no-children --sort dso,symbol -g none --percent-limit 0.7 --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | sed "s/ *$//" | head -50 >"${out%.svg}.txt"
rm -f "$data"
