#!/bin/bash
# DataNodes' CPU per MiB: `cairn up` (3 DataNodes), then 3 runs of either
#   write: hdfs-native, 4 writers, 8 x 256 MiB, replication 3 (`cairn bench dfsio`)
#   read:  the harness's Java DFSIO client, 4 threads, 4 x 256 MiB written first
# printing MiB/s and the DataNodes' utime+stime per MiB (per client MiB for writes).
# usage: dn_cpu.sh BINARY write|read [cairn up -D args...]
set -u
BIN=$1; MODE=$2; shift 2
H=${HARNESS:-$(dirname "$0")/../../shared/anchors/hdfs-harness/harness}
D=$(mktemp -d /tmp/dn_cpu.XXXX)
PORT=$((20000 + RANDOM % 10000))
URL=hdfs://127.0.0.1:$PORT
"$BIN" up --dir "$D" --rpc-address 127.0.0.1:$PORT --datanodes 3 "$@" >"$D/up.log" 2>&1 &
UP=$!
for _ in $(seq 60); do sleep 1; [ "$(pgrep -f "datanode.*$D" | wc -l)" -ge 3 ] && break; done
sleep 5
PIDS=$(pgrep -f "datanode.*$D" | tr '\n' ' ')
cpu() { local t=0; for p in $PIDS; do t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat))); done; echo $t; }
if [ "$MODE" = read ]; then
  "$H" dfsio --fs $URL --files 4 --size-mb 256 --replication 3 --mode write --threads 4 >/dev/null 2>&1
else
  "$BIN" bench dfsio --fs $URL --files 4 --size 64m --threads 4 --ops write >/dev/null 2>&1 # warm-up
fi
for r in 1 2 3; do
  c0=$(cpu)
  if [ "$MODE" = read ]; then
    rate=$("$H" dfsio --fs $URL --files 4 --size-mb 256 --mode read --threads 4 2>&1 | grep RESULT | grep -oE "agg_mb_s=[0-9.]+")
    mib=1024
  else
    rate=$("$BIN" bench dfsio --fs $URL --files 8 --size 256m --threads 4 --replication 3 --ops write 2>&1 | grep aggregate_mib_per_s | tr -s ' ')
    mib=2048
  fi
  c1=$(cpu)
  echo "$MODE run $r: $rate dn_ms_per_MiB=$(echo "scale=2; ($c1 - $c0) * 10 / $mib" | bc)"
done
kill $UP; wait $UP 2>/dev/null; sleep 1; pkill -f "$D"; rm -rf "$D"
