#!/usr/bin/env python3
"""Interleaved A/B of the Java client's dfsio (the shared harness) on Cairn and HDFS.

usage: bench/java_write_ab.py CAIRN_BINARY REPS FILES SIZE_MB THREADS [MODE [SYSTEMS]]
MODE: write (default), or read|randread, whose files are written first (untimed) and
deleted after. SYSTEMS: comma-separated of cairn (CAIRN_BINARY), cairn2 (the binary in $CAIRN2),
cairnenv (CAIRN_BINARY with fixed glibc malloc thresholds), hdfs (MiniDFSCluster).
All clusters run at once; each repetition runs every system in turn, alternating the
order. Per run: aggregate MiB/s, server CPU ms per MiB (utime+stime from /proc/<pid>/stat
of the cluster's processes, by role), the client JVM's CPU ms per MiB, context switches
per MiB, and for Cairn the deepest disk queue. PERF=<system> records the first
repetition's DataNodes with `perf record -g` into the work directory."""
import os, re, resource, signal, subprocess, sys, time, json, shutil, statistics, urllib.request
from cairnbench.runner import await_cluster, data_bytes, launch_cluster, settle, stop_process_group
H = os.environ.get("HARNESS", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "anchors", "hdfs-harness", "harness"))
CAIRN = sys.argv[1]
REPS = int(sys.argv[2]); FILES = int(sys.argv[3]); SIZE = int(sys.argv[4]); THREADS = int(sys.argv[5])
MODE = sys.argv[6] if len(sys.argv) > 6 else "write"
SYSTEMS = (sys.argv[7] if len(sys.argv) > 7 else "cairn,hdfs").split(",")
WORK = os.environ.get("AB_WORK", "/tmp/java_write_ab"); shutil.rmtree(WORK, ignore_errors=True); os.makedirs(WORK)
TCK = os.sysconf("SC_CLK_TCK")
def pgroup(pgid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open("/proc/%s/stat" % d).read()
                f = st[st.rindex(")") + 2:].split()
                if int(f[2]) == pgid:
                    cmd = open("/proc/%s/cmdline" % d).read().replace("\0", " ")
                    out.append((int(d), (int(f[11]) + int(f[12])) / TCK, cmd))
            except (OSError, ValueError):
                pass
    return out
def cpu(c):
    r = {}
    for pid, t, cmd in pgroup(c.proc.pid):
        role = "dn" if " datanode" in cmd else ("nn" if " namenode" in cmd else ("jvm" if "java" in cmd else "other"))
        r[pid] = (role, t)
    return r
def ctx(c):
    n = 0
    for pid, _, cmd in pgroup(c.proc.pid):
        try:
            for d in os.listdir("/proc/%d/task" % pid):
                for l in open("/proc/%d/task/%s/status" % (pid, d)):
                    if "ctxt_switches" in l:
                        n += int(l.split()[1])
        except OSError:
            pass
    return n
def start(kind):
    if kind == "hdfs":
        c = launch_cluster("hdfs", H, WORK, kind)
    else:
        env = None
        if kind == "cairnenv":
            env = dict(os.environ, MALLOC_TRIM_THRESHOLD_=str(256 << 20), MALLOC_MMAP_THRESHOLD_=str(4 << 20))
        c = launch_cluster("cairn", os.environ.get("CAIRN2", CAIRN) if kind == "cairn2" else CAIRN, WORK, kind, env=env)
    try:
        return await_cluster(c)
    except RuntimeError as e:
        stop_process_group(c.proc, signal.SIGKILL, 10)
        sys.exit(str(e))
def stop(c):
    stop_process_group(c.proc, signal.SIGINT, 60)
def metrics(c):
    tot = {}
    for a in c.http:
        try:
            for k, v in json.loads(urllib.request.urlopen("http://%s/metrics" % a, timeout=10).read()).items():
                if isinstance(v, (int, float)):
                    tot[k] = max(tot.get(k, 0), v) if "_max_" in k else tot.get(k, 0) + v
        except Exception:
            pass
    return tot
cl = {k: start(k) for k in SYSTEMS}
res = {k: [] for k in cl}
try:
    for rep in range(REPS):
        for k, c in (cl.items() if rep % 2 == 0 else reversed(list(cl.items()))):
            d = "/ab%d" % rep
            dfsio = lambda mode: [H, "dfsio", "--fs", c.url, "--dir", d, "--files", str(FILES), "--size-mb",
                                  str(SIZE), "--threads", str(THREADS), "--mode", mode, "--replication", "3"]
            cmd = dfsio(MODE)
            if MODE != "write":
                # The files a read times are written first, untimed.
                before = data_bytes(c)
                w = subprocess.run(dfsio("write"), capture_output=True, text=True, timeout=900)
                if w.returncode:
                    print("FAIL write before read", k, w.stdout[-800:], w.stderr[-800:]); continue
            perf = None
            if os.environ.get("PERF") and k == os.environ.get("PERF") and rep == 0:
                dns = [str(pid) for pid, (role, _) in cpu(c).items() if role == "dn"]
                perf = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-o", os.path.join(WORK, "perf.data"), "-p", ",".join(dns)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1)
            cs0 = ctx(c)
            m0 = metrics(c); c0 = cpu(c); r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.time()
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            t1 = time.time(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN); c1 = cpu(c); m1 = metrics(c)
            cs1 = ctx(c)
            if perf:
                perf.send_signal(signal.SIGINT); perf.wait()
            if MODE != "write":
                subprocess.run([CAIRN, "dfs", "-fs", c.url, "-rm", "-r", "-skipTrash", d], capture_output=True, timeout=300)
                settle(c, before, "the read's files", print)  # replicas are unlinked in the background
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT dfsio")]
            if p.returncode or not line:
                print("FAIL", k, p.stdout[-800:], p.stderr[-800:]); continue
            agg = float(re.search(r"agg_mb_s=([\d.]+)", line[0]).group(1))
            mib = FILES * SIZE
            by = {}
            for pid, (role, t) in c1.items():
                by[role] = by.get(role, 0) + t - c0.get(pid, (role, 0))[1]
            client = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
            dm = {x: m1.get(x, 0) - m0.get(x, 0) for x in m1 if not x.endswith("_max_depth") and isinstance(m1.get(x), (int, float))}
            row = {"agg": agg, "wall": round(t1 - t0, 2), "client_cpu_ms_per_mib": round(1000 * client / mib, 2),
                   "server_cpu_ms_per_mib": {r: round(1000 * v / mib, 2) for r, v in by.items()},
                   "ctxsw_per_mib": round((cs1 - cs0) / (FILES * SIZE), 1), "load": open("/proc/loadavg").read().split()[0]}
            if "write_disk_queue_max_depth" in m1: row["qmax"] = m1["write_disk_queue_max_depth"]
            res[k].append(row)
            print(k, rep, json.dumps(row), flush=True)
finally:
    for c in cl.values(): stop(c)
for k, rows in res.items():
    if rows:
        a = sorted(r["agg"] for r in rows)
        s = sorted(sum(r["server_cpu_ms_per_mib"].values()) for r in rows)
        print("SUMMARY", k, "agg MiB/s median %.1f min %.1f max %.1f" % (statistics.median(a), a[0], a[-1]),
              "server cpu ms/MiB median %.2f (%.2f-%.2f)" % (statistics.median(s), s[0], s[-1]))
