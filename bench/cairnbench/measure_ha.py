"""`--mode ha`: durable NameNode mutations with three NameNodes (`cairn up --ha`: one Raft group, an edit is
answered once a majority has it on disk) beside one NameNode (`cairn up`), on the same machine, interleaved.

Each system is a whole cluster (3 DataNodes; the DataNodes do nothing here). The clients are
NNThroughputBenchmark (remote mode, against the active NameNode's address) and `cairn bench nn --fs`; every
op runs at each thread count of `ha_threads` (16 and 64), `reps` times, one system after the other. Besides
ops/s, the CPU time of every NameNode process of the system (utime + stime from /proc/<pid>/stat, before
and after the whole run of the client, its preparation included) per operation.

Figure keys (every repetition's value under each):
  ("ha", system, client, op, threads)      ops/s
  ("hacpu", system, client, op, threads)   µs of NameNode CPU (all of the system's NameNodes) per operation
system: "one" (cairn up) or "three" (cairn up --ha); client: "NNThroughputBenchmark" or "cairn bench nn".
"""
import os
import re
import signal
import subprocess
import time

from .clients import cairn_nn, java_nnbench
from .runner import stop_process_group
from .scale_procs import cpu_seconds

OPS = ["create", "mkdirs", "delete"]
THREADS = [16, 64]
SYSTEMS = ["one", "three"]


class HaCluster:
    """`cairn up --ha`: the URL of the nameservice, each NameNode's pid and RPC address."""


def cpu_or_none(pid):
    """utime + stime of a process in seconds, or None when it is gone."""
    try:
        return cpu_seconds(pid)
    except (OSError, IndexError, ValueError):
        return None


def start_ha(b, name, timeout=180):
    c = HaCluster()
    c.name, c.dir = name, os.path.join(b.work, name)
    c.cmd = [b.cairn, "up", "--ha", "--dir", c.dir, "--rpc-address", "127.0.0.1:0"]
    c.out = os.path.join(b.work, name + ".out")
    b.log("start", name, " ".join(c.cmd[1:]))
    with open(c.out, "w") as fh:
        c.proc = subprocess.Popen(c.cmd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    t = time.time()
    while time.time() - t < timeout:
        text = open(c.out).read()
        m = re.search(r"Cairn is up: (hdfs://\S+)", text)
        if m:
            c.url = m.group(1)
            c.namenodes = {nn: (int(pid), addr) for nn, pid, addr in
                           re.findall(r"namenode-(\S+) \(pid (\d+)\): hdfs://(\S+)", text)}
            c.conf = os.path.join(c.dir, "conf")
            b.log(name, "up at", c.url, "after %.1fs:" % (time.time() - t), c.namenodes)
            return c
        if c.proc.poll() is not None:
            raise RuntimeError("%s exited: %s" % (name, text[-1500:]))
        time.sleep(0.3)
    stop_ha(c)
    raise RuntimeError("%s not ready after %ds" % (name, timeout))


def stop_ha(c):
    stop_process_group(c.proc, signal.SIGINT, 60)  # cairn up stops its children on SIGINT


def active(b, c, timeout=60):
    """The NameNode id that says it is active (`cairn admin -getServiceState`), waiting for an election."""
    t = time.time()
    while time.time() - t < timeout:
        for nn in sorted(c.namenodes):
            r = b.run([b.cairn, "--conf", c.conf, "admin", "-getServiceState", nn], 30)
            if r.returncode == 0 and r.stdout.strip() == "active":
                return nn
        time.sleep(0.5)
    raise RuntimeError("%s: no NameNode became active within %ds" % (c.name, timeout))


def one_run(b, system, client, url, pids, op, t, files):
    before = [cpu_or_none(p) for p in pids]
    if client == "NNThroughputBenchmark":
        ops = java_nnbench(b, url, op, t, files)
    else:
        ops = (cairn_nn(b, ["--fs", url], op, t, files) or {}).get("ops_per_sec")
    after = [cpu_or_none(p) for p in pids]
    b.add(("ha", system, client, op, t), ops)
    if ops is not None and None not in before and None not in after:
        secs = sum(a - x for a, x in zip(after, before))
        b.add(("hacpu", system, client, op, t), secs * 1e6 / files)


def run(b):
    p = b.params
    res = b.begin("ha")
    res["facts"] = b.machine_facts()
    files = p["nn_files"]
    one = b.start_cluster("cairn", "cairn-one")
    three = start_ha(b, "cairn-three")
    try:
        one_pid = namenode_pids(one.url)
        res["layout"] = {"three": sorted(three.namenodes)}
        for op in OPS:
            for t in THREADS:
                for rep in range(p["reps"]):
                    for client in ("NNThroughputBenchmark", "cairn bench nn"):
                        for system in SYSTEMS:
                            if system == "one":
                                url, pids = one.url, one_pid
                            else:
                                nn = active(b, three)
                                url = "hdfs://" + three.namenodes[nn][1]
                                pids = [pid for pid, _ in three.namenodes.values()]
                            b.log(client, system, op, "threads", t, "rep", rep + 1, url)
                            one_run(b, system, client, url, pids, op, t, files)
    finally:
        stop_ha(three)
        b.stop_cluster(one)
    return b.result(res)


def namenode_pids(url):
    """The pid of the process listening on the port of url (cairn up does not print its NameNode's pid)."""
    port = int(url.rsplit(":", 1)[1])
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                for line in fh.readlines()[1:]:
                    f = line.split()
                    if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(f[9])
        except OSError:
            pass
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return [int(pid)]
        except OSError:
            continue
    return []

