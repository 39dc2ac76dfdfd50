#!/usr/bin/env python3
"""Interleaved A/B of the Java client's dfsio (the shared harness) at one bytes-per-checksum.

usage: bench/bpc_ab.py BPC REPS SYSTEMS
SYSTEMS: comma-separated of NAME=CAIRN_BINARY[@key=value+key=value] (a `cairn up` cluster
with those -D settings) or hdfs (MiniDFSCluster); all are up at once, started with
dfs.bytes-per-checksum=BPC. Each repetition runs, on every system in turn (the order
turning), the modes in $MODES (default write,read,randread; randread = $READS random
aligned 4 KiB preads, default 3000; seekread = the same as seek+read) on $FILES files of $SIZE MiB (4, 256), $THREADS
threads (1), replication 3, and prints each RESULT line with the Cairn DataNodes'
read counters (summed /metrics deltas)."""
import json, os, shutil, signal, subprocess, sys, urllib.request
from cairnbench.runner import await_cluster, launch_cluster, stop_process_group
H = os.environ.get("HARNESS", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "anchors", "hdfs-harness", "harness"))
BPC = sys.argv[1]; REPS = int(sys.argv[2]); SYS = sys.argv[3].split(",")
READS = int(os.environ.get("READS", "3000")); FILES = int(os.environ.get("FILES", "4")); SIZE = int(os.environ.get("SIZE", "256"))
MODES = os.environ.get("MODES", "write,read,randread").split(",")
WORK = "/tmp/bpc_ab"; shutil.rmtree(WORK, ignore_errors=True); os.makedirs(WORK)
def start(spec):
    name, _, binary = spec.partition("=")
    binary, _, extra = binary.partition("@")
    defines = ["dfs.bytes-per-checksum=" + BPC]
    if name != "hdfs":
        defines += (os.environ.get("CAIRN_D", "") + " " + extra.replace("+", " ")).split()
    c = launch_cluster("hdfs" if name == "hdfs" else "cairn", H if name == "hdfs" else binary, WORK, name, defines)
    try:
        return await_cluster(c)
    except RuntimeError as e:
        stop_process_group(c.proc, signal.SIGKILL, 10)
        sys.exit(str(e))
def du(d):
    return int(subprocess.run(["du", "-sb", d], capture_output=True, text=True).stdout.split()[0] or 0)
def metrics(c):
    tot = {}
    for a in c.http:
        try:
            for k, v in json.loads(urllib.request.urlopen("http://%s/metrics" % a, timeout=10).read()).items():
                if isinstance(v, (int, float)): tot[k] = tot.get(k, 0) + v
        except Exception: pass
    return tot
cl = [start(s) for s in SYS]
res = {}
try:
    for rep in range(REPS):
        order = cl if rep % 2 == 0 else cl[::-1]
        for c in order:
            base = du(c.dir)
            d = "/ab"  # overwritten each repetition: the disk holds one set of files per system
            for mode in MODES:
                cmd = [H, "dfsio", "--fs", c.url, "--dir", d, "--files", str(FILES), "--size-mb", str(SIZE), "--threads", os.environ.get("THREADS", "1"),
                       "--mode", mode, "--replication", "3", "-D", "dfs.bytes-per-checksum=" + BPC]
                if mode in ("randread", "seekread"):
                    cmd[cmd.index("--mode") + 1] = "randread"
                    cmd += ["--read-size", "4096", "--reads", str(READS), "--randread-mode", "pread" if mode == "randread" else "seek"]
                m0 = metrics(c)
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
                m1 = metrics(c)
                line = [l for l in p.stdout.splitlines() if l.startswith("RESULT")]
                if p.returncode or not line: print("FAIL", c.name, mode, p.stdout[-600:], p.stderr[-600:]); continue
                print(c.name, rep, line[0], {k: m1[k] - m0.get(k, 0) for k in ("read_bytes_sent", "read_bytes_zero_copy", "read_packets_sent") if k in m1}, flush=True)
                res.setdefault((c.name, mode), []).append(line[0])
finally:
    for c in cl:
        stop_process_group(c.proc, signal.SIGINT, 60)
for k, v in res.items():
    print("SUMMARY", k, v)
