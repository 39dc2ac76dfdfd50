#!/usr/bin/env bash
# Apache Hadoop's FileSystem contract tests against an hdfs:// URL:
#
#   tests/java/contract/run.sh --fs hdfs://127.0.0.1:9820 [--webfs webhdfs://127.0.0.1:9870]
#       [--conf DIR] [CLASS ...]
#
# --webfs: also the FileSystem contract over WebHDFS (WebHdfsFileSystemContract).
# CLASS: e.g. RenameContract (src/cairn/contract/); none: all of them. One line
# per test on stdout (ok / FAIL / skipped), then a count; exit status 1 when a
# test failed. The root-directory tests delete everything under /: point it at
# a scratch cluster. First use resolves pom.xml (../classpath.sh: offline from
# ~/.m2 first, then Maven Central) into target/classpath.txt and compiles src/.
# Environment: JAVA, CAIRN_LOG_LEVEL (Hadoop's log on stderr; default ERROR).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="$HERE/target"
CP_FILE="$TARGET/classpath.txt"
CLASSES="$TARGET/classes"

if [ "${1:-}" != "--fs" ] || [ -z "${2:-}" ]; then
  echo "usage: $0 --fs URL [--webfs webhdfs://HOST:PORT] [--conf DIR] [CLASS ...]" >&2
  exit 2
fi
FS="$2"
shift 2
WEBFS=""
if [ "${1:-}" = "--webfs" ]; then
  WEBFS="${2:-}"
  shift 2
fi
# --conf DIR: a client configuration (core-site.xml, hdfs-site.xml), e.g. an
# HA nameservice's from `cairn up --ha`.
CONF=""
if [ "${1:-}" = "--conf" ]; then
  CONF="${2:-}:"
  shift 2
fi

mkdir -p "$TARGET"
exec 9>"$TARGET/.setup.lock"
flock 9
"$HERE/../classpath.sh" "$HERE" "$CP_FILE"
if [ ! -f "$CLASSES/.built" ] || [ "$CP_FILE" -nt "$CLASSES/.built" ] \
   || [ -n "$(find "$HERE/src" -type f -newer "$CLASSES/.built" -print -quit)" ]; then
  rm -rf "$CLASSES"
  mkdir -p "$CLASSES"
  javac -nowarn -encoding UTF-8 --release 17 -d "$CLASSES" -cp "$(cat "$CP_FILE")" "$HERE"/src/cairn/contract/*.java
  touch "$CLASSES/.built"
fi
exec 9>&-

# Hadoop's log4j setup reads this file (all of it goes to stderr; stdout
# keeps the per-test lines).
LOG4J="$TARGET/log4j.properties"
cat >"$LOG4J" <<PROPS
log4j.rootLogger=${CAIRN_LOG_LEVEL:-ERROR},stderr
# DistCp's contract test reads what DistCp logs at INFO.
log4j.logger.org.apache.hadoop.tools=INFO
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%d %p %c{1}: %m%n
PROPS

# The suites keep local files under "target/test/data" of the working
# directory (a relative test.build.data, which on the cluster is taken from
# the user's home): here, not wherever the caller stands.
cd "$TARGET"
exec "${JAVA:-java}" -Xmx512m -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true \
  -Dlog4j.configuration="file:$LOG4J" -Dcairn.fs="$FS" -Dcairn.webfs="$WEBFS" \
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  -cp "$CONF$CLASSES:$(cat "$CP_FILE")" cairn.contract.Run "$@"
