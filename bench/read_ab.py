#!/usr/bin/env python3
"""Interleaved A/B of hdfs-native reads (`cairn bench dfsio --ops read`) on two Cairn clusters.

usage: A_D="-D key=value ..." B_D="..." bench/read_ab.py CAIRN_BINARY REPS THREADS FILES SIZE_MB
Two `cairn up` clusters of one binary run at once, A with the -D flags in $A_D, B with $B_D
(or of two builds: $A_BIN and $B_BIN, when set, start A's and B's clusters; the client is
always CAIRN_BINARY's `cairn bench dfsio`);
the same files (FILES x SIZE_MB, replication 3) are written once on each, then each
repetition reads them on both, alternating the order. Per run: aggregate MiB/s, the
DataNodes' CPU seconds per GiB read (utime+stime from /proc/<pid>/stat) and the client's
(getrusage of the finished child); medians at the end. OPS=randread measures random 4 KiB
positional reads instead (IOPS; CPU figures are then per GiB of the files, not of the reads)."""
import resource, os, re, signal, subprocess, sys, shutil, statistics
from cairnbench.runner import await_cluster, launch_cluster, stop_process_group
BIN, REPS, THREADS, FILES, SIZE = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
OPS = os.environ.get("OPS", "read")
WORK = os.environ.get("AB_WORK", "/tmp/read_ab"); shutil.rmtree(WORK, ignore_errors=True); os.makedirs(WORK)
TCK = os.sysconf("SC_CLK_TCK")
def start(name):
    # $A_D / $B_D: "-D key=value ..." as on a cairn command line.
    defines = [a for a in os.environ.get(name.upper() + "_D", "").split() if a != "-D"]
    c = launch_cluster("cairn", os.environ.get(name.upper() + "_BIN", BIN), WORK, name, defines)
    try:
        return await_cluster(c, 120)
    except RuntimeError as e:
        stop_process_group(c.proc, signal.SIGKILL, 10)
        sys.exit(str(e))
def cpu(pids):
    s = 0
    for p in pids:
        f = open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split(); s += (int(f[11]) + int(f[12])) / TCK
    return s
cl = {"a": start("a"), "b": start("b")}
for c in cl.values():
    r = subprocess.run([BIN, "bench", "dfsio", "--fs", c.url, "--files", str(FILES), "--size", "%dm" % SIZE, "--threads", "4", "--ops", "write", "--keep", "--dir", "/rd"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-500:]
res = {k: [] for k in cl}; cpus = {k: [] for k in cl}; ccpu = {k: [] for k in cl}
try:
    for rep in range(REPS):
        for k in (["a", "b"] if rep % 2 == 0 else ["b", "a"]):
            c = cl[k]
            c0 = cpu(c.datanode_pids); r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run([BIN, "bench", "dfsio", "--json", "--fs", c.url, "--files", str(FILES), "--size", "%dm" % SIZE, "--threads", str(THREADS), "--ops", OPS, "--keep", "--dir", "/rd"], capture_output=True, text=True, timeout=900)
            dc = cpu(c.datanode_pids) - c0; r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cc = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
            if p.returncode: print("FAIL", k, p.stdout[-500:], p.stderr[-500:]); continue
            key = "aggregate_mib_per_s" if OPS == "read" else "iops"
            mbs = float(re.findall(r'"%s":\s*([\d.]+)' % key, p.stdout)[0])
            gib = FILES * SIZE / 1024
            print("%s rep%d figure=%.0f datanode_cpu_s_per_GiB=%.3f client_cpu_s_per_GiB=%.3f" % (k, rep, mbs, dc / gib, cc / gib), flush=True)
            res[k].append(mbs); cpus[k].append(dc / gib); ccpu[k].append(cc / gib)
finally:
    for c in cl.values():
        stop_process_group(c.proc, signal.SIGINT, 30)
for k in cl:
    if res[k]: print(k, os.environ.get(k.upper() + "_D", ""), "median %s %.0f" % ("MiB/s" if OPS == "read" else "IOPS", statistics.median(res[k])), sorted(round(x) for x in res[k]), "DN cpu s/GiB median %.3f" % statistics.median(cpus[k]), "client cpu s/GiB median %.3f" % statistics.median(ccpu[k]))
