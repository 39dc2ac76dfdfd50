#!/usr/bin/env python3
"""Interleaved rounds of Hadoop's NNThroughputBenchmark (the shared harness's `nnbench`) on whole
clusters, Cairn beside HDFS, as `bench/compare --mode main` runs it but with more repetitions.

usage: bench/nnj_ab.py CAIRN_BINARY REPS OPS [THREADS] [FILES]
Both clusters are up at once (`cairn up`: a NameNode and 3 DataNode processes; `harness minidfs
--datanodes 3`: HDFS's NameNode and 3 DataNodes in one JVM); each repetition runs every op in OPS
(comma-separated, e.g. delete,rename) on each system in turn, the order turning. Prints each run's
ops/s and, at the end, the median and range per op and system."""
import os, re, shutil, signal, statistics, subprocess, sys
from cairnbench.runner import await_cluster, launch_cluster, stop_process_group
H = os.environ.get("HARNESS", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "anchors", "hdfs-harness", "harness"))
BIN, REPS, OPS = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
THREADS = sys.argv[4] if len(sys.argv) > 4 else "16"
FILES = sys.argv[5] if len(sys.argv) > 5 else "20000"
WORK = "/tmp/nnj_ab"; shutil.rmtree(WORK, ignore_errors=True); os.makedirs(WORK)
def start(name):
    c = launch_cluster(name, H if name == "hdfs" else BIN, WORK, name)
    try:
        return await_cluster(c)
    except RuntimeError as e:
        stop_process_group(c.proc, signal.SIGKILL, 10)
        sys.exit(str(e))
systems = [start("cairn"), start("hdfs")]
res = {}
try:
    for rep in range(REPS):
        for op in OPS:
            for c in (systems if rep % 2 == 0 else systems[::-1]):
                p = subprocess.run([H, "nnbench", "--fs", c.url, "--op", op, "--threads", THREADS, "--files", FILES,
                                    "--dir", os.path.join(WORK, "nnbench"), "--timeout", "270"], capture_output=True, text=True, timeout=300)
                m = re.search(r"RESULT nnbench .* ops_per_sec=([\d.]+)", p.stdout)
                if not m: print("FAIL", c.name, op, p.stdout[-500:], p.stderr[-500:], flush=True); continue
                print(c.name, op, rep, m.group(1), flush=True)
                res.setdefault((op, c.name), []).append(float(m.group(1)))
finally:
    for c in systems:
        stop_process_group(c.proc, signal.SIGINT, 60)
    shutil.rmtree(WORK, ignore_errors=True)
for (op, name), v in sorted(res.items()):
    print("SUMMARY", op, name, "median %.0f" % statistics.median(v), "min %.0f max %.0f" % (min(v), max(v)), "runs", len(v))
