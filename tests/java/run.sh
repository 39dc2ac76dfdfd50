#!/usr/bin/env bash
# Cairn FsShell conformance kit: run a script of `hadoop fs` commands in one JVM
# against an hdfs:// URL and print the normalised transcript (see README.md).
#
#   tests/java/run.sh --fs hdfs://127.0.0.1:9820 --script tests/java/scripts/fsshell.txt
#
# Works from any directory (relative --script paths are taken from the caller's).
# First use: fetches the Hadoop 3.4.1 client jars into lib/ with Maven (offline
# from ~/.m2 first, then online) and compiles src/ into target/classes; later
# runs redo that only when pom.xml or a source is newer.
#
# Environment: JAVA (default: java on PATH), CAIRN_LOG_LEVEL (Hadoop client
# logging on stderr; default ERROR), CAIRN_JAVA_OPTS (extra JVM options),
# CAIRN_JAVA_TIMEOUT (seconds before the run is halted with status 124; 600).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LIB="$HERE/lib"
CLASSES="$HERE/target/classes"
LIB_STAMP="$LIB/.fetched"
CLS_STAMP="$CLASSES/.built"

fetch_jars() {
  mkdir -p "$HERE/target"
  rm -rf "$LIB"
  local log="$HERE/target/mvn.log"
  if ! ( cd "$HERE" && mvn -B -q -o dependency:copy-dependencies -DoutputDirectory="$LIB" ) >"$log" 2>&1; then
    echo "run.sh: offline Maven fetch failed (see $log); trying online" >&2
    rm -rf "$LIB"
    if ! ( cd "$HERE" && mvn -B -q dependency:copy-dependencies -DoutputDirectory="$LIB" ) >"$log" 2>&1; then
      cat "$log" >&2
      echo "run.sh: could not fetch the Hadoop client jars" >&2
      exit 3
    fi
  fi
  touch "$LIB_STAMP"
}

compile() {
  rm -rf "$CLASSES"
  mkdir -p "$CLASSES"
  local list="$HERE/target/sources.txt"
  find "$HERE/src" -name '*.java' > "$list"
  javac -nowarn -encoding UTF-8 --release 17 -d "$CLASSES" -cp "$LIB/*" @"$list"
  touch "$CLS_STAMP"
}

# Runs started at once (a test binary's tests run in parallel) take turns to
# fetch and compile: one does the work, the others wait and find it done.
mkdir -p "$HERE/target"
exec 9>"$HERE/target/.setup.lock"
flock 9
if [ ! -f "$LIB_STAMP" ] || [ "$HERE/pom.xml" -nt "$LIB_STAMP" ]; then
  fetch_jars
fi
if [ ! -f "$CLS_STAMP" ] || [ "$LIB_STAMP" -nt "$CLS_STAMP" ] \
   || [ -n "$(find "$HERE/src" -type f -newer "$CLS_STAMP" -print -quit)" ]; then
  compile
fi

# Java 17 and Hadoop 3.4: open what Hadoop reaches into reflectively.
JOPTS=(
  -Xmx512m
  -XX:+UseSerialGC
  -XX:TieredStopAtLevel=1
  -Djava.net.preferIPv4Stack=true
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
)
# shellcheck disable=SC2206
JOPTS+=(${CAIRN_JAVA_OPTS:-})

# `run.sh --main Class ...` runs another program of the kit (e.g. DataCheck).
MAIN=cairn.conformance.ShellScript
if [ "${1:-}" = "--main" ]; then
  MAIN="cairn.conformance.$2"
  shift 2
fi
CP="$CLASSES:$LIB/*"
if [ "$MAIN" = cairn.conformance.DfsAdmin ]; then
  # DFSAdmin is in hadoop-hdfs, outside the shaded client jars: this program
  # runs on the unshaded jars of hdfs-tools/pom.xml instead (see there).
  TOOLS_CP="$HERE/target/hdfs-tools-classpath.txt"
  "$HERE/classpath.sh" "$HERE/hdfs-tools" "$TOOLS_CP"
  CP="$CLASSES:$(cat "$TOOLS_CP")"
fi
# The setup is done (hdfs-tools' classpath included): let the others in.
exec 9>&-
# Every run has a time limit (CAIRN_JAVA_TIMEOUT seconds, default 600): the
# watchdog halts the JVM with status 124 when it passes.
exec "${JAVA:-java}" "${JOPTS[@]}" -cp "$CP" cairn.conformance.Watchdog "$MAIN" "$@"
