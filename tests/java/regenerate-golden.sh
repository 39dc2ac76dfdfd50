#!/usr/bin/env bash
# Regenerate the golden transcript(s) expected/<name>.txt from REAL Apache HDFS 3.4.1
# (the FsShell scripts, and the kit programs listed in PROGRAMS below).
#
#   tests/java/regenerate-golden.sh [SCRIPT_NAME...]     (default: every scripts/*.txt)
#
# What it does:
#   1. copies the anchor harness (../shared/anchors/hdfs-harness, i.e. the shared
#      docs checkout next to the repository; override with HDFS_HARNESS=DIR) to a
#      temporary directory and builds it (`./harness build`);
#   2. starts a real MiniDFSCluster there (`./harness minidfs`, 1 DataNode, free
#      ports on 127.0.0.1, fresh data directory) and waits for its READY line;
#   3. runs run.sh on each script TWICE against it and checks that the two
#      normalised transcripts are identical (determinism), then writes
#      expected/<name>.txt;
#   4. stops the cluster with SIGTERM and removes the temporary directory.
#
# Needs: JDK 17, Maven, python3 (free ports), and network access to Maven Central
# the first time (hadoop-minicluster 3.4.1 and its dependencies for the harness, the
# Hadoop client jars for run.sh); later runs work from ~/.m2.
# The NameNode runs as the current OS user, who is then the HDFS superuser
# (shown as <super> in the transcript); dfs.permissions.superusergroup is the
# default "supergroup". Takes about a minute.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HARNESS_SRC="${HDFS_HARNESS:-$HERE/../../../shared/anchors/hdfs-harness}"
if [ ! -x "$HARNESS_SRC/harness" ]; then
  echo "regenerate-golden: no anchor harness at $HARNESS_SRC (set HDFS_HARNESS=DIR)" >&2
  exit 2
fi
HARNESS_SRC="$(cd "$HARNESS_SRC" && pwd)"

if [ $# -gt 0 ]; then
  NAMES=("$@")
else
  NAMES=()
  for f in "$HERE"/scripts/*.txt; do
    NAMES+=("$(basename "$f" .txt)")
  done
fi
for n in "${NAMES[@]}"; do
  [ -f "$HERE/scripts/$n.txt" ] || { echo "regenerate-golden: no scripts/$n.txt" >&2; exit 2; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-golden.XXXXXX")"
NN_PID=""
cleanup() {
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
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "regenerate-golden: building the anchor harness (copy in $WORK)" >&2
cp -r "$HARNESS_SRC" "$WORK/harness"
rm -rf "$WORK/harness/target" "$WORK/harness/data"
"$WORK/harness/harness" build

read -r NN_PORT HTTP_PORT < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
for s in ss:
    s.close()')

echo "regenerate-golden: starting MiniDFSCluster on 127.0.0.1:$NN_PORT" >&2
"$WORK/harness/harness" minidfs --nn-port "$NN_PORT" --http-port "$HTTP_PORT" \
  --datanodes 1 --dir "$WORK/dfs" > "$WORK/minidfs.out" 2>&1 &
NN_PID=$!
for _ in $(seq 180); do
  grep -q '^READY ' "$WORK/minidfs.out" && break
  if ! kill -0 "$NN_PID" 2>/dev/null; then
    cat "$WORK/minidfs.out" >&2
    echo "regenerate-golden: MiniDFSCluster exited before READY" >&2
    exit 1
  fi
  sleep 1
done
if ! grep -q '^READY ' "$WORK/minidfs.out"; then
  cat "$WORK/minidfs.out" >&2
  echo "regenerate-golden: no READY line after 180 s" >&2
  exit 1
fi
URL="hdfs://127.0.0.1:$NN_PORT"

# record NAME CMD...: runs CMD twice against the cluster; if both transcripts
# are identical (determinism), writes expected/NAME.txt.
record() {
  local name="$1"
  shift
  for run in 1 2; do
    echo "regenerate-golden: $name, run $run against $URL" >&2
    "$@" > "$WORK/$name.$run.txt"
  done
  if ! cmp -s "$WORK/$name.1.txt" "$WORK/$name.2.txt"; then
    diff -u "$WORK/$name.1.txt" "$WORK/$name.2.txt" >&2 || true
    echo "regenerate-golden: $name: the two runs differ; golden NOT written" >&2
    exit 1
  fi
  mkdir -p "$HERE/expected"
  cp "$WORK/$name.1.txt" "$HERE/expected/$name.txt"
  echo "regenerate-golden: wrote expected/$name.txt" >&2
}

# Programs of the kit with a golden transcript of their own
# (name:Class → expected/name.txt from `run.sh --main Class --fs URL`).
PROGRAMS=("appcalls:AppCalls")
for entry in "${PROGRAMS[@]}"; do
  record "${entry%%:*}" "$HERE/run.sh" --main "${entry#*:}" --fs "$URL"
done

for n in "${NAMES[@]}"; do
  record "$n" "$HERE/run.sh" --fs "$URL" --script "$HERE/scripts/$n.txt"
done
