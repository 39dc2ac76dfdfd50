#!/usr/bin/env python3
"""By hand: where a NameNode's CPU goes, by thread, over one
NNThroughputBenchmark op's own timed phase, for HDFS's NameNode or Cairn's.

    bench/nn_thread_phase.py hdfs|CAIRN_BINARY OP FILES [--threads 16]

A NameNode alone (`harness minidfs --datanodes 0`, whose JVM is the child's
pid, or `cairn namenode`), warm-up runs of the same op (--warmup, default
one of 5,000 files: the JVM's JIT compilers still run after it), then
one run while every thread's utime and stime (/proc/PID/task/*/stat) are
sampled every 10 ms. The phase is the benchmark's own (scale_procs.nnbench:
its "Starting N OP(s)." log line to that plus its Elapsed Time), so the
preparation of the files is left out and nothing polls the NameNode. Threads
are grouped by name with digits left out; a thread started during the phase
counts from zero, one that ended during it is lost (the whole process's line
has it). Prints µs of CPU an op per group, user and system, and the edit
log's syncs and edits (FSNamesystem's TotalSyncCount and
LastWrittenTransactionId from /jmx) over the whole measured run.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cairnbench.scale_procs import CLK_TCK, START_RE, Ctx, NameNode, cpu_seconds  # noqa: E402


def thread_times(pid):
    """{tid: (group, utime ticks, stime ticks)} of every live thread, and the whole process's CPU seconds."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as fh:
                s = fh.read()
        except OSError:
            continue
        comm = s[s.index("(") + 1:s.rindex(")")]
        rest = s[s.rindex(")") + 2:].split()
        group = re.sub(r"[0-9#]+", "", comm).strip().replace(" ", "_") or "?"
        out[tid] = (group, int(rest[11]), int(rest[12]))
    return out, cpu_seconds(pid)


class ThreadSampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.samples, self.done = pid, [], threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                self.samples.append((time.time(),) + thread_times(self.pid))
            except OSError:
                return
            self.done.wait(0.01)

    def at(self, t):
        """The last sample at or before t."""
        best = None
        for s in self.samples:
            if s[0] > t:
                break
            best = s
        return best


def fsn(http, attr):
    """One FSNamesystem figure from /jmx (HDFS caches its metrics for 10 s: callers wait first)."""
    q = "http://%s/jmx?get=Hadoop:service=NameNode,name=FSNamesystem::%s" % (http, attr)
    with urllib.request.urlopen(q, timeout=10) as r:
        return int(json.load(r)["beans"][0][attr])


def edit_log(http):
    """(syncs, last txid) once every cached figure is fresh."""
    time.sleep(11)
    return fsn(http, "TotalSyncCount"), fsn(http, "LastWrittenTransactionId")


def nnbench(ctx, url, op, threads, files):
    flag = "-dirs" if op == "mkdirs" else "-files"
    cmd = ctx.java("2g", "org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark",
                   ["-fs", url, "-op", op, "-threads", str(threads), flag, str(files)])
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout


def phase(log, op):
    """(start wall time, elapsed s, ops) of the op's timed phase, from the benchmark's log."""
    start, elapsed, ops = None, None, None
    for line in log.splitlines():
        m = START_RE.match(line)
        if m and m.group(3) == op:
            start = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        body = line.split(": ", 1)[-1].strip()
        if body.startswith("Elapsed Time:"):
            elapsed = float(body.split(":")[1]) / 1000
        if body.startswith("# operations:"):
            ops = int(body.split(":")[1])
    return start, elapsed, ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nn", help="hdfs, or the cairn binary")
    ap.add_argument("op")
    ap.add_argument("files", type=int)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=1, help="warm-up runs of the op before the measured one")
    ap.add_argument("--warmup-files", type=int, default=5000)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    harness = os.environ.get("HARNESS_DIR", os.path.join(here, "..", "..", "shared", "anchors", "hdfs-harness"))
    work = tempfile.mkdtemp(prefix="nn_thread_phase.")
    cairn = os.path.join(here, "..", "target", "release", "cairn") if a.nn == "hdfs" else a.nn
    ctx = Ctx(work, cairn, harness, lambda *m: None, None)
    port = 20000 + os.getpid() % 20000
    nn = NameNode(ctx, "HDFS" if a.nn == "hdfs" else "Cairn", "nn", port, http_port=port + 1)
    try:
        nn.start(fresh=True)
        for _ in range(a.warmup):
            nnbench(ctx, nn.url, a.op, a.threads, a.warmup_files)
        http = "127.0.0.1:%d" % (port + 1)
        log0 = edit_log(http)
        sampler = ThreadSampler(nn.pid)
        sampler.start()
        log = nnbench(ctx, nn.url, a.op, a.threads, a.files)
        sampler.done.set()
        sampler.join(5)
        log1 = edit_log(http)
    finally:
        nn.stop()
        shutil.rmtree(work, ignore_errors=True)
    t0, elapsed, ops = phase(log, a.op)
    if t0 is None or elapsed is None or not ops:
        sys.exit("no timed phase in the benchmark's log:\n" + log[-2000:])
    s0, s1 = sampler.at(t0), sampler.at(t0 + elapsed)
    if s0 is None or s1 is None or s1 is s0:
        sys.exit("the samples do not cover the timed phase")
    groups = {}
    for tid, (group, u, s) in s1[1].items():
        _, u0, st0 = s0[1].get(tid, (group, 0, 0))
        g = groups.setdefault(group, [0, 0])
        g[0] += u - u0
        g[1] += s - st0
    us = 1e6 / CLK_TCK / ops
    print("%s %s: %d ops in %.2f s (%.0f ops/s), %d threads" % (a.nn, a.op, ops, elapsed, ops / elapsed, a.threads))
    print("  %-28s %7s %7s %7s" % ("thread group", "user", "system", "total"))
    for group, (u, s) in sorted(groups.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
        if u + s:
            print("  %-28s %7.1f %7.1f %7.1f" % (group, u * us, s * us, (u + s) * us))
    print("  %-28s %23.1f  (µs of CPU an op)" % ("whole process", (s1[2] - s0[2]) * 1e6 / ops))
    syncs, edits = log1[0] - log0[0], log1[1] - log0[1]
    if syncs > 0:
        print("edit log over the whole run (its preparation and clean-up included): %d edits, %d syncs,"
              " %.1f edits a sync" % (edits, syncs, edits / syncs))


if __name__ == "__main__":
    main()
