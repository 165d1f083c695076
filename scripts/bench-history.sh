#!/usr/bin/env bash
# A regular's 500th order against a new customer's 5th (issue 57), side by side in one run:
# benches/history_bench.rs seeds one brand on the embedded bus and store with REGULARS customers of
# 495 orders and ROUNDS groups of REGULARS customers of 4 orders, then times, round by round, every
# regular's next order and a group's 5th orders (microseconds of processing per order).
#
#   scripts/bench-history.sh [REGULARS=100] [ROUNDS=5] [HISTORY=495]
#
# HISTORY is how many orders each regular has before the timed ones (495: the 496th … 500th).
#
# BENCH_HISTORY overrides the history-bench binary (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/common.sh
regulars=${1:-100}
rounds=${2:-5}
history=${3:-495}
[ -n "${BENCH_HISTORY:-}" ] || [ -x target/release/history-bench ] || cargo build --release --bin history-bench
bench=${BENCH_HISTORY:-target/release/history-bench}
"$bench" "$work/store" "$regulars" "$rounds" "$history"
