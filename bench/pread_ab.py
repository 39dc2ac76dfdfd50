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
import re
import shutil
import socket
import subprocess
import sys
import time

HARNESS = os.environ.get("HARNESS", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "..", "shared", "anchors", "hdfs-harness", "harness"))
WORK = "/tmp/pread_ab"
READS = os.environ.get("READS", "10000")
SIZE = os.environ.get("SIZE", "4k")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(name, cmd, ready):
    out = os.path.join(WORK, name + ".out")
    p = subprocess.Popen(cmd, stdout=open(out, "w"), stderr=subprocess.STDOUT, start_new_session=True)
    t = time.time()
    while time.time() - t < 180:
        m = re.search(ready, open(out).read())
        if m:
            return p, m.group(1)
        if p.poll() is not None:
            sys.exit(open(out).read()[-2000:])
        time.sleep(0.3)
    sys.exit("%s not ready" % name)


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
    procs, systems = [], []
    try:
        p, url = start("hdfs", [HARNESS, "minidfs", "--nn-port", str(free_port()), "--http-port", str(free_port()),
                                "--datanodes", "3", "--dir", os.path.join(WORK, "hdfs"), "--replication", "3",
                                "--blocksize", str(128 << 20)], r"READY (hdfs://\S+)")
        procs.append(p)
        systems.append(("hdfs", url))
        for name, settings in variants:
            defines = [a for kv in settings.split("+") if kv for a in ("-D", kv)]
            p, url = start(name, [binary] + defines + ["up", "--dir", os.path.join(WORK, name), "--rpc-address",
                                                       "127.0.0.1:0"], r"Cairn is up: (hdfs://\S+)")
            procs.append(p)
            systems.append((name, url))
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
        for p in procs:
            try:
                os.killpg(p.pid, 15)
            except OSError:
                pass


if __name__ == "__main__":
    main()
