#!/bin/bash
# By hand: system calls (or any perf events) per operation, by thread, over
# 1.5 s in the middle of one NNThroughputBenchmark op's own phase against a
# fresh `cairn namenode` alone (16 threads). The op count comes from the
# NameNode's RPC counter of METHOD (one /jmx attribute, read at the window's
# two ends), the edit log's syncs from /prom.
# usage: nn_syscalls.sh BINARY OP METHOD FILES EVENTS
#   e.g. nn_syscalls.sh target/release/cairn delete Delete 100000 \
#          syscalls:sys_enter_futex,syscalls:sys_enter_pwrite64,context-switches
# (perf counts at most about four tracepoints per thread at once: run it again
# for more.)
set -u
BIN=$1; OP=$2; METHOD=$3; FILES=$4; EVENTS=$5
H=${HARNESS:-$(dirname "$0")/../../shared/anchors/hdfs-harness/harness}
D=$(mktemp -d /tmp/nn_syscalls.XXXX)
PORT=$((20000 + RANDOM % 20000))
"$BIN" namenode --dir "$D" --format --force >/dev/null 2>&1
"$BIN" namenode --dir "$D" --rpc-address 127.0.0.1:$PORT --http-address 127.0.0.1:$((PORT + 1)) >"$D/nn.log" 2>&1 &
PID=$!
sleep 1.5
"$H" nnbench --fs hdfs://127.0.0.1:$PORT --op "$OP" --threads 16 --files "$FILES" >"$D/bench.log" 2>&1 &
B=$!
calls() {
  curl -s "http://127.0.0.1:$((PORT + 1))/jmx?get=Hadoop:service=NameNode,name=RpcDetailedActivityForPort$PORT::${METHOD}NumOps" |
    grep -oE 'NumOps" *: *[0-9]+' | grep -oE '[0-9]+$'
}
syncs() { curl -s "http://127.0.0.1:$((PORT + 1))/prom" | awk '$1 == "cairn_journal_sync_seconds_count" {print $2}'; }
until [ "$(calls)" != "" ] && [ "$(calls)" -gt 0 ]; do sleep 0.02; kill -0 $B 2>/dev/null || break; done
sleep 0.3
n0=$(calls); s0=$(syncs)
perf stat --per-thread -x, -e "$EVENTS" -p $PID -- sleep 1.5 2>"$D/stat.csv"
n1=$(calls); s1=$(syncs)
ops=$((n1 - n0))
echo "$OP: $ops calls and $((s1 - s0)) syncs in the window"
awk -F, -v n=$ops '$2 ~ /^[0-9]+$/ && $2 > 0 {printf "%-24s %-36s %8d %6.3f a call\n", $1, $4, $2, $2 / (n > 0 ? n : 1)}' "$D/stat.csv"
wait $B
kill $PID; wait $PID 2>/dev/null; rm -rf "$D"
