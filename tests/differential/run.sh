#!/usr/bin/env bash
# Differential runs, Apache HDFS 3.4.1 (MiniDFSCluster) beside Cairn, by hand:
#
#   tests/differential/run.sh fsshell FIRST_SEED COUNT [COMMANDS]   # random `hadoop fs` scripts
#   tests/differential/run.sh webhdfs FIRST_SEED COUNT [CALLS]      # random WebHDFS calls
#   tests/differential/run.sh api FIRST_SEED COUNT [CALLS]          # random FileSystem API calls
#
# Starts (once; later runs reuse them) HDFS on 127.0.0.1:19500 (HTTP 19501) from
# ../shared/anchors/hdfs-harness and `cairn up` (target/release/cairn) on 19600
# (HTTP 19601), both with 3 DataNodes, data under $WORK (default /tmp/cairn-diff).
# FsShell transcripts go through tests/java/run.sh and are compared whole; WebHDFS
# answers are compared call by call (status, exception class and message, JSON with
# times, ids and addresses masked). Differences are printed; nothing is asserted.
set -u
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$REPO/tests/differential"
HARNESS="${HDFS_HARNESS:-$REPO/../shared/anchors/hdfs-harness}"
WORK="${WORK:-/tmp/cairn-diff}"
mode=$1; first=$2; count=$3; n=${4:-40}
mkdir -p "$WORK/out"
up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if ! up 19500; then
  rm -rf "$WORK/hdfs"
  (cd "$HARNESS" && nohup ./harness minidfs --nn-port 19500 --http-port 19501 --datanodes 3 \
     --dir "$WORK/hdfs" > "$WORK/hdfs.log" 2>&1 &)
fi
if ! up 19600; then
  rm -rf "$WORK/cairn"
  nohup "$REPO/target/release/cairn" -D dfs.namenode.http-address=127.0.0.1:19601 up \
    --dir "$WORK/cairn" --rpc-address 127.0.0.1:19600 > "$WORK/cairn.log" 2>&1 &
fi
for _ in $(seq 1 120); do up 19500 && up 19600 && up 19501 && up 19601 && break; sleep 1; done
sleep 3
for s in $(seq "$first" $((first + count - 1))); do
  if [ "$mode" = webhdfs ]; then
    python3 "$HERE/webhdfs_diff.py" "$s" "$n" 127.0.0.1:19501 127.0.0.1:19601
    continue
  fi
  if [ "$mode" = api ]; then
    for side in h:19500 c:19600; do
      "$REPO/tests/java/run.sh" --main ApiFuzz --fs "hdfs://127.0.0.1:${side#*:}" --seed "$s" \
        --calls "$n" > "$WORK/out/a${side%%:*}$s.txt" 2> "$WORK/out/a${side%%:*}$s.err"
    done
    if cmp -s "$WORK/out/ah$s.txt" "$WORK/out/ac$s.txt"; then echo "seed $s: same"
    else echo "seed $s: differs"; diff -a "$WORK/out/ah$s.txt" "$WORK/out/ac$s.txt" | cut -c1-400; fi
    continue
  fi
  python3 "$HERE/fsshell_gen.py" "$s" "$n" "$WORK/local" > "$WORK/out/s$s.txt"
  for side in h:19500 c:19600; do
    "$REPO/tests/java/run.sh" --fs "hdfs://127.0.0.1:${side#*:}" --script "$WORK/out/s$s.txt" \
      > "$WORK/out/${side%%:*}$s.txt" 2> "$WORK/out/${side%%:*}$s.err"
  done
  if cmp -s "$WORK/out/h$s.txt" "$WORK/out/c$s.txt"; then echo "seed $s: same"
  else echo "seed $s: differs"; diff -a "$WORK/out/h$s.txt" "$WORK/out/c$s.txt" | cut -c1-300; fi
done
