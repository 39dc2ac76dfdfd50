#!/bin/bash
# Where a NameNode op's CPU goes, by thread: a fresh `cairn namenode` alone,
# a warm-up, then one run of OP with 16 threads from CLIENT (rust: `cairn
# bench nn`; java: Hadoop's NNThroughputBenchmark from the shared harness).
# Over the op's own calls (from the first call of METHOD to the FILES-th,
# found by polling the NameNode's call count every 10 ms, so the preparation of
# the files is left out) it prints, per call, each thread group's user and
# system CPU (/proc/PID/task/*/stat) and voluntary and involuntary context
# switches (/proc/PID/task/*/status), and the edit log's syncs and edits a
# sync (the /prom histogram of batch sizes).
# Each poll costs the NameNode's tokio workers about 0.45 ms (the /jmx
# request), so about 45 ms a second of phase land on the workers' figures
# (about 5 µs a call at 9,000 calls/s): for NNThroughputBenchmark,
# bench/nn_thread_phase.py finds the phase from the benchmark's own log
# instead and polls nothing, and it measures HDFS's NameNode the same way.
# usage: nn_thread_cpu.sh BINARY OP METHOD FILES [rust|java]
#   e.g. nn_thread_cpu.sh target/release/cairn mkdirs mkdirs 100000 java
set -u
BIN=$1; OP=$2; METHOD=$3; FILES=$4; CLIENT=${5:-rust}
H=${HARNESS:-$(dirname "$0")/../../shared/anchors/hdfs-harness/harness}
D=$(mktemp -d /tmp/nn_thread_cpu.XXXX)
PORT=$((20000 + RANDOM % 20000))
PROM=http://127.0.0.1:$((PORT + 1))/prom
"$BIN" namenode --dir "$D/name" --format --force >/dev/null 2>&1
"$BIN" namenode --dir "$D/name" --rpc-address 127.0.0.1:$PORT --http-address 127.0.0.1:$((PORT + 1)) >"$D/nn.log" 2>&1 &
PID=$!
until curl -sf "$PROM" >/dev/null; do sleep 0.1; kill -0 $PID || exit 1; done
"$BIN" bench nn --fs hdfs://127.0.0.1:$PORT --op fileStatus --threads 16 --files 5000 >/dev/null
threads() {
  for t in /proc/$PID/task/*; do
    echo "$(cat "$t/comm") $(awk '{print $14, $15}' "$t/stat") $(awk '/ctxt_switches/ {print $2}' "$t/status" | tr '\n' ' ')"
  done | awk '{u[$1] += $2; s[$1] += $3; v[$1] += $4; n[$1] += $5} END {for (k in u) print k, u[k], s[k], v[k], n[k]}' | sort
}
# Successful calls of METHOD so far: one attribute of the detailed RPC bean,
# a /jmx query the NameNode answers without reading the cluster's status
# (a whole /prom scrape every 10 ms costs the NameNode CPU of its own).
calls() {
  curl -s "http://127.0.0.1:$((PORT + 1))/jmx?get=Hadoop:service=NameNode,name=RpcDetailedActivityForPort$PORT::${METHOD^}NumOps" |
    grep -oE '"[A-Za-z0-9]+NumOps" *: *[0-9]+' | grep -oE '[0-9]+$'
}
# Calls of METHOD so far, then "syncs edits" so far (the count and the sum
# of the edit log's batch-size histogram): one /prom scrape, at the ends only.
scrape() {
  echo "$(calls) $(curl -s "$PROM" | awk '
    $1 == "cairn_journal_batch_edits_count" {c = $2} $1 == "cairn_journal_batch_edits_sum" {s = $2}
    END {print c + 0, s + 0}')"
}
base=$(calls)
if [ "$CLIENT" = java ]; then
  FLAG=-files; [ "$OP" = mkdirs ] && FLAG=-dirs
  "$H" nnbench --fs hdfs://127.0.0.1:$PORT --op "$OP" --threads 16 $FLAG "$FILES" >"$D/bench.log" 2>&1 &
else
  "$BIN" bench nn --json --fs hdfs://127.0.0.1:$PORT --op "$OP" --threads 16 --files "$FILES" >"$D/bench.log" 2>&1 &
fi
B=$!
until [ "$(calls)" -gt "$base" ]; do sleep 0.01; kill -0 $B 2>/dev/null || break; done
threads >"$D/t0"; s0=$(scrape)
until [ "$(calls)" -ge $((base + FILES)) ]; do sleep 0.01; kill -0 $B 2>/dev/null || break; done
threads >"$D/t1"; s1=$(scrape)
wait $B
if [ "$CLIENT" = java ]; then
  echo "client: NNThroughputBenchmark, $(grep -oE "ops_per_sec=[0-9.]+" "$D/bench.log")"
else
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; print("client: cairn bench nn, ops_per_sec=%s, NameNode CPU %s us an op (its own reading)" % (r["ops_per_sec"], r["nn_cpu_us_per_op"]))' "$D/bench.log"
fi
n=$(echo "$s0 $s1" | awk '{print $4 - $1}')
TCK=$(getconf CLK_TCK)
echo "$METHOD calls counted: $n"
echo "thread group: user us/call, system us/call, voluntary switches/call, involuntary switches/call"
join "$D/t0" "$D/t1" | awk -v f="$n" -v t="$TCK" '{printf "  %-16s %6.1f %6.1f %6.2f %6.2f\n", $1, ($6-$2)*1e6/t/f, ($7-$3)*1e6/t/f, ($8-$4)/f, ($9-$5)/f}'
echo "$s0 $s1" | awk -v f="$n" '{b = $5 - $2; e = $6 - $3; if (b > 0) printf "edit log: %d syncs (%.2f a call), %.1f edits a sync\n", b, b / f, e / b}'
kill $PID; wait $PID 2>/dev/null; rm -rf "$D"
