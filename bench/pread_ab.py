#!/usr/bin/env python3
"""Random small reads through hdfs-native, Cairn clusters beside HDFS, interleaved.

usage: bench/pread_ab.py CAIRN_BINARY REPS THREADS [NAME=KEY=VALUE+KEY=VALUE ...]

Starts HDFS (the shared harness's MiniDFSCluster, 3 DataNodes, replication 3,
128 MiB blocks) and one `cairn up` cluster per NAME (default: one named
"cairn" with no -D settings; each NAME=... gets those `-D` settings, joined
by +), all up at once. Writes 4 x 256 MiB once on each (`cairn bench dfsio
--ops write --keep`), then every repetition runs `cairn bench dfsio --ops
randread --randread-count $READS (10000) --randread-size $SIZE (4k)
--threads THREADS` on each system, the order turning, and prints pread and
seek+read IOPS with p50/p99 latency. A lone reader (THREADS=1) measures the
latency of one read; 4 threads, how reads overlap.

Example (the DataNode's cached small reads on and off, with HDFS beside):
  bench/pread_ab.py target/release/cairn 6 1 off=cairn.datanode.read.cached-inline=false on=
"""
import json
import os
import shutil
import signal
import subprocess
import sys

from cairnbench.runner import await_cluster, launch_cluster, stop_process_group

HARNESS = os.environ.get("HARNESS", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "..", "shared", "anchors", "hdfs-harness", "harness"))
WORK = "/tmp/pread_ab"
READS = os.environ.get("READS", "10000")
SIZE = os.environ.get("SIZE", "4k")


def start(kind, program, name, defines=()):
    c = launch_cluster(kind, program, WORK, name, defines)
    try:
        return await_cluster(c)
    except RuntimeError as e:
        stop_process_group(c.proc, signal.SIGKILL, 10)
        sys.exit(str(e))


def dfsio(binary, url, ops, threads):
    cmd = [binary, "bench", "dfsio", "--json", "--fs", url, "--files", "4", "--size", "256m", "--threads", threads,
           "--replication", "3", "--ops", ops, "--randread-count", READS, "--randread-size", SIZE, "--dir", "/ab",
           "--keep"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode:
        print("%s failed: %s" % (" ".join(cmd), r.stderr[-1500:]), flush=True)
        return None
    return json.loads(r.stdout)["results"]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    binary, reps, threads = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    variants = [a.partition("=")[::2] for a in sys.argv[4:]] or [("cairn", "")]
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    clusters, systems = [], []
    try:
        clusters.append(start("hdfs", HARNESS, "hdfs"))
        systems.append(("hdfs", clusters[-1].url))
        for name, settings in variants:
            clusters.append(start("cairn", binary, name, [kv for kv in settings.split("+") if kv]))
            systems.append((name, clusters[-1].url))
        for _, url in systems:
            dfsio(binary, url, "write", threads)
        for rep in range(reps):
            for name, url in (systems if rep % 2 == 0 else systems[::-1]):
                r = dfsio(binary, url, "randread", threads)
                if r:
                    pr, sk = r["randread"]["pread"], r["randread"]["seek_read"]
                    print("rep %d %-8s pread %6.0f IOPS p50 %s p99 %s µs | seek+read %6.0f IOPS p50 %s p99 %s µs" % (
                        rep, name, pr["iops"], pr.get("p50_us"), pr.get("p99_us"), sk["iops"], sk.get("p50_us"),
                        sk.get("p99_us")), flush=True)
    finally:
        for c in clusters:
            stop_process_group(c.proc, signal.SIGTERM, 60)


if __name__ == "__main__":
    main()
