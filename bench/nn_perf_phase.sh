#!/bin/bash
# perf record of a fresh `cairn namenode` alone over one NNThroughputBenchmark
# op's own phase (16 threads, from the shared harness): recording starts at
# the op's first call (the NameNode's count of METHOD's calls, polled every
# 10 ms) and lasts SECONDS. Read it with `perf report -i OUT`, or with
# bench/perf_tree.py for where one function's time goes.
# usage: nn_perf_phase.sh BINARY OP METHOD FILES OUT [SECONDS]
#   PERF_FREQ (default 1999) and PERF_CALL_GRAPH (default "dwarf,16384";
#   "fp" for frame pointers, smaller files) set perf's sampling.
#   e.g. nn_perf_phase.sh target/release/cairn delete delete 60000 /tmp/del.data 2
set -u
BIN=$1; OP=$2; METHOD=$3; FILES=$4; OUT=$5; SECS=${6:-2}
H=${HARNESS:-$(dirname "$0")/../../shared/anchors/hdfs-harness/harness}
D=$(mktemp -d /tmp/nn_perf_phase.XXXX)
PORT=$((20000 + RANDOM % 20000))
"$BIN" namenode --dir "$D" --format --force >/dev/null 2>&1
"$BIN" namenode --dir "$D" --rpc-address 127.0.0.1:$PORT --http-address 127.0.0.1:$((PORT + 1)) >"$D/nn.log" 2>&1 &
PID=$!
sleep 1.5
# Successful calls of METHOD so far: one attribute of the detailed RPC bean,
# a /jmx query the NameNode answers without reading the cluster's status
# (a whole /prom scrape every 10 ms costs the NameNode CPU of its own).
calls() {
  curl -s "http://127.0.0.1:$((PORT + 1))/jmx?get=Hadoop:service=NameNode,name=RpcDetailedActivityForPort$PORT::${METHOD^}NumOps" |
    grep -oE '"[A-Za-z0-9]+NumOps" *: *[0-9]+' | grep -oE '[0-9]+$'
}
"$H" nnbench --fs hdfs://127.0.0.1:$PORT --op "$OP" --threads 16 --files "$FILES" >"$D/bench.log" 2>&1 &
B=$!
until [ "$(calls)" != "" ] && [ "$(calls)" -gt 0 ]; do sleep 0.01; kill -0 $B 2>/dev/null || break; done
n0=$(calls)
perf record -F "${PERF_FREQ:-1999}" --call-graph "${PERF_CALL_GRAPH:-dwarf,16384}" -p $PID -o "$OUT" -- sleep "$SECS" >/dev/null 2>&1
n1=$(calls)
wait $B
echo "$OP: $((n1 - n0)) calls while perf ran (${SECS} s of samples, plus its start and end), $(grep -oE "ops_per_sec=[0-9.]+" "$D/bench.log") -> $OUT"
kill $PID; wait $PID 2>/dev/null; rm -rf "$D"
