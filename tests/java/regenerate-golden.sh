#!/usr/bin/env bash
# Regenerate the golden transcript(s) expected/<name>.txt from REAL Apache HDFS 3.4.1.
#
#   tests/java/regenerate-golden.sh [NAME...]     (default: every scripts/*.txt, then the programs)
#
# A NAME is either an FsShell script (scripts/NAME.txt, run by ShellScript on a
# cluster of 1 DataNode) or a program: `appcalls` (AppCalls: located, batched
# listings and other application calls; 1 DataNode), `checksums`
# (FileChecksums: files written with replication 1 and 3, CRC32C, 512-byte
# chunks, and their getFileChecksum values; 3 DataNodes) or `checksums-crc32`
# (the same with CRC32, 1024-byte chunks, replication 1; 3 DataNodes) or
# `webhdfs-checksums` (FileChecksums, replication 1, over the cluster's
# WebHDFS: whole-file checksums from the DataNodes' GETFILECHECKSUM) or
# `dfsadmin` (DfsAdmin: the `hdfs dfsadmin` script scripts/admin/dfsadmin.txt;
# `quota` is the same program on scripts/admin/quota.txt; `cacheadmin` on
# scripts/admin/cacheadmin.txt, each run on a fresh cluster (directive ids
# are never reused); `dnadmin` on scripts/admin/dnadmin.txt, each run on a
# fresh cluster (it shuts its DataNode down);
# 1 DataNode, run before the other programs of its cluster, as its -report
# counts blocks and they leave deleted ones behind for a few heartbeats) or
# `storagepolicies` (DfsAdmin --tool storagepolicies: the `hdfs
# storagepolicies` script scripts/admin/storagepolicies.txt; 1 DataNode) or
# `snapshots` (DfsAdmin on scripts/admin/snapshots.txt: dfsadmin, dfs,
# lsSnapshottableDir and snapshotDiff on snapshots; 1 DataNode) or
# `truncate-concat` (TruncateConcat: truncate and concat, their preconditions
# and block recovery, replication 3; 3 DataNodes) or `fsck` (`hdfs fsck`
# through DfsAdmin on the four scripts of scripts/admin/fsck, with a replica
# corrupted and the DataNodes stopped in between: golden/FsckGolden.java runs
# its own MiniDFSCluster of 2 DataNodes in its JVM; writes expected/fsck-*.txt),
# or `webhdfs-NAME`: the FsShell script scripts/NAME.txt run against the
# cluster's WebHDFS (`webhdfs://127.0.0.1:HTTP_PORT`, the Java
# WebHdfsFileSystem), written to expected/webhdfs-NAME.txt.
#
# What it does:
#   1. copies the anchor harness (../shared/anchors/hdfs-harness, i.e. the shared
#      docs checkout next to the repository; override with HDFS_HARNESS=DIR) to a
#      temporary directory and builds it (`./harness build`);
#   2. starts a real MiniDFSCluster there (`./harness minidfs`, free ports on
#      127.0.0.1, fresh data directory) and waits for its READY line;
#   3. runs run.sh on each script (or the program) TWICE against it and checks that
#      the two outputs are identical (determinism), then writes expected/<name>.txt;
#   4. stops the cluster with SIGTERM and removes the temporary directory.
#
# Needs: JDK 17, Maven, python3 (free ports), and network access to Maven Central
# the first time (hadoop-minicluster 3.4.1 and its dependencies for the harness, the
# Hadoop client jars for run.sh); later runs work from ~/.m2.
# The NameNode runs as the current OS user, who is then the HDFS superuser
# (shown as <super> in the transcript); dfs.permissions.superusergroup is the
# default "supergroup". Takes about a minute per cluster.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HARNESS_SRC="${HDFS_HARNESS:-$HERE/../../../shared/anchors/hdfs-harness}"
if [ ! -x "$HARNESS_SRC/harness" ]; then
  echo "regenerate-golden: no anchor harness at $HARNESS_SRC (set HDFS_HARNESS=DIR)" >&2
  exit 2
fi
HARNESS_SRC="$(cd "$HARNESS_SRC" && pwd)"

# Programs with a golden output of their own: name -> run.sh arguments (the
# cluster's URL is added) and the DataNodes their cluster needs.
program_args() {
  case "$1" in
    appcalls) echo "--main AppCalls" ;;
    inotify) echo "--main Inotify" ;;
    dfsadmin) echo "--main DfsAdmin --script $HERE/scripts/admin/dfsadmin.txt" ;;
    storagepolicies) echo "--main DfsAdmin --tool storagepolicies --script $HERE/scripts/admin/storagepolicies.txt" ;;
    quota) echo "--main DfsAdmin --script $HERE/scripts/admin/quota.txt" ;;
    cacheadmin) echo "--main DfsAdmin --script $HERE/scripts/admin/cacheadmin.txt" ;;
    dnadmin) echo "--main DfsAdmin --script $HERE/scripts/admin/dnadmin.txt" ;;
    snapshots) echo "--main DfsAdmin --script $HERE/scripts/admin/snapshots.txt" ;;
    checksums) echo "--main FileChecksums --replications 1,3" ;;
    checksums-crc32) echo "--main FileChecksums --replications 1 --bpc 1024 -D dfs.checksum.type=CRC32" ;;
    webhdfs-checksums) echo "--main FileChecksums --replications 1" ;;
    truncate-concat) echo "--main TruncateConcat" ;;
    *) return 1 ;;
  esac
}
program_datanodes() {
  case "$1" in
    appcalls | inotify | dfsadmin | storagepolicies | quota | snapshots | cacheadmin | dnadmin) echo 1 ;;
    *) echo 3 ;;
  esac
}

# `fsck`: FsckGolden (its own MiniDFSCluster, see above), run twice.
record_fsck() {
  "$HERE/run.sh" --main DfsAdmin > /dev/null 2>&1 || true   # compiles the kit
  local cp classes="$WORK/fsck-classes"
  cp="$(cat "$WORK/harness/target/classpath.txt")"
  mkdir -p "$classes"
  javac -nowarn -encoding UTF-8 --release 17 -d "$classes" -cp "$HERE/target/classes:$cp" \
    "$HERE/golden/cairn/conformance/FsckGolden.java"
  for run in 1 2; do
    echo "regenerate-golden: fsck, run $run (own MiniDFSCluster)" >&2
    mkdir -p "$WORK/fsck.$run"
    java -Xmx1g -Djava.net.preferIPv4Stack=true \
      --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
      --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
      --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
      -cp "$classes:$HERE/target/classes:$cp" cairn.conformance.FsckGolden \
      --scripts "$HERE/scripts/admin/fsck" --out "$WORK/fsck.$run" --dir "$WORK/fsck-dfs-$run" \
      > "$WORK/fsck.$run.log" 2>&1 || { tail -50 "$WORK/fsck.$run.log" >&2; exit 1; }
  done
  if ! diff -ru "$WORK/fsck.1" "$WORK/fsck.2" >&2; then
    echo "regenerate-golden: fsck: the two runs differ; golden NOT written" >&2
    exit 1
  fi
  cp "$WORK"/fsck.1/fsck-*.txt "$HERE/expected/"
  echo "regenerate-golden: wrote expected/fsck-*.txt" >&2
}

if [ $# -gt 0 ]; then
  NAMES=("$@")
else
  NAMES=()
  for f in "$HERE"/scripts/*.txt; do
    NAMES+=("$(basename "$f" .txt)")
  done
  NAMES+=(dfsadmin storagepolicies quota cacheadmin dnadmin snapshots appcalls inotify checksums checksums-crc32 truncate-concat fsck)
fi
SCRIPTS=()
PROGRAMS=()
FSCK=""
for n in "${NAMES[@]}"; do
  if [ "$n" = fsck ]; then
    FSCK=1
  elif program_args "$n" >/dev/null; then
    PROGRAMS+=("$n")
  elif [ -f "$HERE/scripts/$n.txt" ] || [ -f "$HERE/scripts/${n#webhdfs-}.txt" ]; then
    SCRIPTS+=("$n")
  else
    echo "regenerate-golden: no scripts/$n.txt and no program $n" >&2
    exit 2
  fi
done
# dfsadmin before the other programs (see above).
ORDERED=()
for n in "${PROGRAMS[@]}"; do [ "$n" != dfsadmin ] || ORDERED+=("$n"); done
for n in "${PROGRAMS[@]}"; do [ "$n" = dfsadmin ] || ORDERED+=("$n"); done
PROGRAMS=("${ORDERED[@]}")

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-golden.XXXXXX")"
NN_PID=""
stop_cluster() {
  if [ -n "$NN_PID" ] && kill -0 "$NN_PID" 2>/dev/null; then
    kill -TERM "$NN_PID" 2>/dev/null || true
    for _ in $(seq 60); do
      kill -0 "$NN_PID" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$NN_PID" 2>/dev/null; then
      echo "regenerate-golden: MiniDFSCluster did not stop; killing it" >&2
      kill -KILL "$NN_PID" 2>/dev/null || true
    fi
  fi
  NN_PID=""
}
cleanup() {
  stop_cluster
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "regenerate-golden: building the anchor harness (copy in $WORK)" >&2
cp -r "$HARNESS_SRC" "$WORK/harness"
rm -rf "$WORK/harness/target" "$WORK/harness/data"
"$WORK/harness/harness" build
[ -z "$FSCK" ] || record_fsck

# start_cluster N: a fresh MiniDFSCluster with N DataNodes; sets URL.
start_cluster() {
  local datanodes="$1" nn_port http_port dfs="$WORK/dfs-$1"
  read -r nn_port http_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
for s in ss:
    s.close()')

  echo "regenerate-golden: starting MiniDFSCluster ($datanodes DataNodes) on 127.0.0.1:$nn_port" >&2
  # From inside $WORK: the NameNode writes `dfsadmin -metasave` files into its
  # working directory (hadoop.log.dir is unset), which goes away with $WORK.
  (cd "$WORK" && exec "$WORK/harness/harness" minidfs --nn-port "$nn_port" \
    --http-port "$http_port" --datanodes "$datanodes" --dir "$dfs") > "$dfs.out" 2>&1 &
  NN_PID=$!
  for _ in $(seq 180); do
    grep -q '^READY ' "$dfs.out" && break
    if ! kill -0 "$NN_PID" 2>/dev/null; then
      cat "$dfs.out" >&2
      echo "regenerate-golden: MiniDFSCluster exited before READY" >&2
      exit 1
    fi
    sleep 1
  done
  if ! grep -q '^READY ' "$dfs.out"; then
    cat "$dfs.out" >&2
    echo "regenerate-golden: no READY line after 180 s" >&2
    exit 1
  fi
  URL="hdfs://127.0.0.1:$nn_port"
  WEBURL="webhdfs://127.0.0.1:$http_port"
}

# Programs whose every run needs a cluster of its own.
fresh_cluster_each_run() {
  [ "$1" = cacheadmin ] || [ "$1" = dnadmin ]
}

# record NAME RUN.SH-ARGS...: runs twice, checks both outputs agree, writes the golden.
record() {
  local n="$1"
  shift
  for run in 1 2; do
    if fresh_cluster_each_run "$n"; then
      stop_cluster
      start_cluster "$(program_datanodes "$n")"
      # The new cluster's URL replaces the one in the arguments.
      set -- "${@:1:$#-1}" "$URL"
    fi
    echo "regenerate-golden: $n, run $run against $URL" >&2
    "$HERE/run.sh" "$@" > "$WORK/$n.$run.txt"
  done
  if ! cmp -s "$WORK/$n.1.txt" "$WORK/$n.2.txt"; then
    diff -u "$WORK/$n.1.txt" "$WORK/$n.2.txt" >&2 || true
    echo "regenerate-golden: $n: the two runs differ; golden NOT written" >&2
    exit 1
  fi
  mkdir -p "$HERE/expected"
  cp "$WORK/$n.1.txt" "$HERE/expected/$n.txt"
  echo "regenerate-golden: wrote expected/$n.txt ($(wc -l < "$HERE/expected/$n.txt") lines)" >&2
}

# One cluster per DataNode count: the scripts and 1-DataNode programs, then
# the others.
for datanodes in 1 3; do
  started=""
  if [ "$datanodes" = 1 ]; then
    for n in "${SCRIPTS[@]}"; do
      [ -n "$started" ] || { start_cluster 1; started=1; }
      if [ "${n#webhdfs-}" != "$n" ] && [ ! -f "$HERE/scripts/$n.txt" ]; then
        record "$n" --fs "$WEBURL" --script "$HERE/scripts/${n#webhdfs-}.txt"
      else
        record "$n" --fs "$URL" --script "$HERE/scripts/$n.txt"
      fi
    done
  fi
  for n in "${PROGRAMS[@]}"; do
    [ "$(program_datanodes "$n")" = "$datanodes" ] || continue
    [ -n "$started" ] || { start_cluster "$datanodes"; started=1; }
    # webhdfs-NAME programs talk to the cluster's WebHDFS.
    fs="$URL"
    [ "${n#webhdfs-}" = "$n" ] || fs="$WEBURL"
    # shellcheck disable=SC2046
    record "$n" $(program_args "$n") --fs "$fs"
  done
  [ -z "$started" ] || stop_cluster
done
