#!/usr/bin/env bash
# Resolves a POM's dependencies into a classpath file (jars in ~/.m2), offline
# first, then from Maven Central; does nothing while the file is newer than the
# POM. Used by run.sh (hdfs-tools/) and contract/run.sh.
#
#   tests/java/classpath.sh POM_DIR OUT_FILE
#
# Exit status 3 (with Maven's log on stderr) when it cannot be resolved.
set -euo pipefail
dir="$1"
out="$2"
if [ -s "$out" ] && [ ! "$dir/pom.xml" -nt "$out" ]; then
  exit 0
fi
mkdir -p "$(dirname "$out")"
log="$out.mvn.log"
if ! ( cd "$dir" && mvn -B -q -o dependency:build-classpath -Dmdep.outputFile="$out" ) >"$log" 2>&1; then
  echo "classpath.sh: offline Maven resolution of $dir/pom.xml failed (see $log); trying online" >&2
  if ! ( cd "$dir" && mvn -B -q dependency:build-classpath -Dmdep.outputFile="$out" ) >"$log" 2>&1; then
    cat "$log" >&2
    echo "classpath.sh: could not fetch the jars of $dir/pom.xml" >&2
    exit 3
  fi
fi
