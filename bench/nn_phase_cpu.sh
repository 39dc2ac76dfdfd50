#!/bin/bash
# NameNode CPU per call over one NNThroughputBenchmark op's own phase: a fresh
# `cairn namenode` alone, the benchmark from the shared harness (16 threads),
# CPU (/proc/PID/stat utime+stime) from the op's first call to its FILES-th,
# both found by polling the NameNode's count of METHOD's calls; also the edit
# log's syncs per call over the phase and the adaptive linger's counters.
# usage: nn_phase_cpu.sh BINARY OP METHOD FILES [namenode args...]
#   e.g. nn_phase_cpu.sh target/release/cairn fileStatus getFileInfo 40000
set -u
BIN=$1; OP=$2; METHOD=$3; FILES=$4; shift 4
H=${HARNESS:-$(dirname "$0")/../../shared/anchors/hdfs-harness/harness}
D=$(mktemp -d /tmp/nn_phase_cpu.XXXX)
PORT=$((20000 + RANDOM % 20000))
"$BIN" namenode --dir "$D" --format --force >/dev/null 2>&1
"$BIN" namenode "$@" --dir "$D" --rpc-address 127.0.0.1:$PORT --http-address 127.0.0.1:$((PORT + 1)) >"$D/nn.log" 2>&1 &
PID=$!
sleep 1.5
cpu() { awk '{print $14 + $15}' /proc/$PID/stat; }
# One figure of the NameNode's /prom.
prom() { curl -s http://127.0.0.1:$((PORT + 1))/prom | awk -v m="$1" '$1 == m {print $2}'; }
# Successful calls of METHOD so far: one attribute of the detailed RPC bean,
# a /jmx query the NameNode answers without reading the cluster's status
# (a whole /prom scrape every 10 ms costs the NameNode CPU of its own).
calls() {
  curl -s "http://127.0.0.1:$((PORT + 1))/jmx?get=Hadoop:service=NameNode,name=RpcDetailedActivityForPort$PORT::${METHOD^}NumOps" |
    grep -oE '"[A-Za-z0-9]+NumOps" *: *[0-9]+' | grep -oE '[0-9]+$'
}
# The edit log's syncs (group commits) so far.
syncs() { prom cairn_journal_sync_seconds_count; }
"$H" nnbench --fs hdfs://127.0.0.1:$PORT --op "$OP" --threads 16 --files "$FILES" >"$D/bench.log" 2>&1 &
B=$!
until [ "$(calls)" != "" ] && [ "$(calls)" -gt 0 ]; do sleep 0.01; kill -0 $B 2>/dev/null || break; done
n0=$(calls); c0=$(cpu); s0=$(syncs)
until [ "$(calls)" -ge "$FILES" ]; do sleep 0.01; kill -0 $B 2>/dev/null || break; done
n1=$(calls); c1=$(cpu); s1=$(syncs)
# The adaptive linger's probes and how many chose to linger (since start).
linger=$(curl -s http://127.0.0.1:$((PORT + 1))/jmx | grep -oE '"EditLogLinger[A-Za-z]+" *: *[0-9]+' | tr -d ' "' | tr '\n' ' ')
wait $B
echo "$OP calls=$((n1 - n0)) ticks=$((c1 - c0)) us_per_call=$(((c1 - c0) * 10000 / (n1 - n0 + 1))) syncs_per_call=$(awk -v s=$((s1 - s0)) -v n=$((n1 - n0)) 'BEGIN {printf "%.3f", s / (n > 0 ? n : 1)}') $linger$(grep -oE "ops_per_sec=[0-9.]+" "$D/bench.log")"
kill $PID; wait $PID 2>/dev/null; rm -rf "$D"
