"""The measuring side's context: one `Bench` per run of bench/compare.

It owns the temp work dir and its log, runs every subprocess under a hard
timeout (its whole process group is killed), starts and stops clusters, and
collects the figures of the mode being measured (every repetition's value,
keyed by a tuple) and its failed runs (what, and why), which `result()` turns
into the JSON a measure_* module returns.
"""
import collections
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

SCHEMA = 1
# Bench.settle: within one replica of the start is done; no change for this long, or this long in all, ends it.
SETTLE_SLACK = 128 << 20
SETTLE_QUIET = 8.0
SETTLE_MAX = 60.0


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def in_turn(systems, rep):
    """The systems in repetition `rep`'s order: as given on even repetitions, reversed on odd ones, so
    that what a run leaves behind (writeback of its data, deletions, a warm cache) falls on each side."""
    return systems if rep % 2 == 0 else systems[::-1]


class Proc:
    def __init__(self, rc, out, err, secs, timed_out):
        self.returncode, self.stdout, self.stderr, self.secs, self.timed_out = rc, out, err, secs, timed_out


class Cluster:
    pass


class Bench:
    """Run-wide state: paths, parameters, the log, live clusters; per mode: figures and failures."""

    def __init__(self, root, params, command):
        self.root = root
        self.params = params
        self.command = command
        self.work = tempfile.mkdtemp(prefix="cairn-compare-")
        self.log_file = open(os.path.join(self.work, "compare.log"), "w")
        self.cairn = os.path.join(self.work, "bin", "cairn")  # a copy: rebuilds during the run do not change it
        self.harness = None  # the harness script, once set_up() has copied and built it
        self.classpath = None
        self.log4j = None
        self.clusters = []
        self.failures = []  # of the whole run: (mode, what, why)
        self.mode = "setup"
        self.figures = collections.defaultdict(list)
        self.current = None  # the dict begin() returned to the mode being measured

    # ------------------------------------------------------------ logging
    def log(self, *a):
        msg = "[%s] %s" % (time.strftime("%H:%M:%S"), " ".join(str(x) for x in a))
        print(msg, flush=True)
        self.log_file.write(msg + "\n")
        self.log_file.flush()

    def fail(self, what, detail=""):
        why = re.sub(r"\s+", " ", detail or "").strip()[-700:]
        self.failures.append((self.mode, what, why))
        self.log("FAILED", "[%s] %s" % (self.mode, what) + (": " + why if why else ""))

    def add(self, key, value):
        """One repetition's figure (None = not measured; its failure is recorded by whoever failed)."""
        if value is not None:
            self.figures[key].append(float(value))

    # ------------------------------------------------------------ modes
    def begin(self, mode):
        self.mode = mode
        self.figures = collections.defaultdict(list)
        self.current = {"schema": SCHEMA, "mode": mode, "command": self.command, "started": now()}
        return self.current

    def result(self, res):
        """The JSON-ready dict of the mode begun with begin(): res plus figures, failures, run facts."""
        out = dict(res)
        out.setdefault("finished", now())
        for k in ("started", "finished"):
            if isinstance(out[k], datetime.datetime):
                out[k] = out[k].isoformat()
        out["params"] = self.params
        out["commit"], out["dirty"] = self.commit()
        out["log"] = self.log_file.name
        out["figures"] = [{"key": list(k), "values": v} for k, v in self.figures.items()]
        out["failed"] = [{"what": w, "why": y} for m, w, y in self.failures if m == self.mode]
        return out

    # ------------------------------------------------------------ processes
    def run(self, cmd, timeout, check=False):
        """Runs cmd in its own process group; on timeout the whole group is killed (rc 124)."""
        t = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        timed_out = False
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
        except BaseException:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise
        rc = 124 if timed_out else p.returncode
        secs = time.time() - t
        self.log_file.write("$ %s  (rc %d%s, %.1fs)\n%s\n%s\n" % (
            " ".join(cmd), rc, ", TIMED OUT" if timed_out else "", secs, out[-4000:], err[-4000:]))
        self.log_file.flush()
        if timed_out:
            err += "\n[killed after the %d s timeout]" % timeout
        if check and rc != 0:
            raise RuntimeError("%s failed (rc %d): %s" % (" ".join(cmd[:4]), rc, (err or out)[-800:]))
        return Proc(rc, out, err, secs, timed_out)

    def set_up(self, build, cairn_built, harness_src):
        """Builds (unless told not to) and copies cairn, copies and builds the harness."""
        if build:
            self.log("building target/release/cairn")
            self.run(["cargo", "build", "--release", "-p", "cairn"], 1800, check=True)
        os.makedirs(os.path.dirname(self.cairn))
        shutil.copy2(cairn_built, self.cairn)
        harness = os.path.join(self.work, "hdfs-harness")
        shutil.copytree(harness_src, harness, ignore=shutil.ignore_patterns("target", "data"))
        self.harness = os.path.join(harness, "harness")
        self.run([self.harness, "build"], 600, check=True)
        with open(os.path.join(harness, "target", "classpath.txt")) as fh:
            self.classpath = os.path.join(harness, "target", "classes") + ":" + fh.read().strip()
        self.log4j = os.path.join(self.work, "nnbench-log4j.properties")
        with open(self.log4j, "w") as fh:
            fh.write("log4j.rootLogger=WARN,console\nlog4j.appender.console=org.apache.log4j.ConsoleAppender\n"
                     "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
                     "log4j.appender.console.layout.ConversionPattern=%m%n\n"
                     "log4j.logger.org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark=INFO\n")

    # ------------------------------------------------------------ clusters
    def start_cluster(self, kind, name, defines=(), timeout=180):
        """kind 'hdfs' (MiniDFSCluster via the harness) or 'cairn' (`cairn up`); defines: -D key=value."""
        program = self.harness if kind == "hdfs" else self.cairn
        c = launch_cluster(kind, program, self.work, name, defines)
        self.log("start", name, " ".join(c.cmd[-12:]) if kind == "hdfs" else " ".join(c.cmd[1:]))
        self.clusters.append(c)
        t = time.time()
        try:
            await_cluster(c, timeout)
        except RuntimeError:
            self.stop_cluster(c, remove=False)
            raise
        self.log(name, "up at", c.url, "after %.1fs" % (time.time() - t))
        return c

    def stop_cluster(self, c, remove=True):
        stop_process_group(c.proc, signal.SIGINT, 60)  # both stop cleanly on SIGINT
        if c in self.clusters:
            self.clusters.remove(c)
        if remove:
            shutil.rmtree(c.dir, ignore_errors=True)

    def stop_all(self):
        for c in list(self.clusters):
            self.stop_cluster(c)

    # ------------------------------------------------------------ between runs
    def data_bytes(self, c):
        """Bytes the cluster's directory holds on disk now (allocated blocks: a deleted replica is gone)."""
        return data_bytes(c)

    def settle(self, c, baseline, what):
        """settle() below, logged to this run's log."""
        settle(c, baseline, what, self.log)

    # ------------------------------------------------------------ facts
    def commit(self):
        head = self.run(["git", "-C", self.root, "rev-parse", "--short", "HEAD"], 30).stdout.strip()
        dirty = self.run(["git", "-C", self.root, "status", "--porcelain", "--untracked-files=no", "--", "crates",
                          "Cargo.lock"], 30).stdout.strip()
        return head, bool(dirty)

    def machine_facts(self):
        """[(fact, value)] as the pages print them."""
        facts = [("CPUs", str(os.cpu_count()))]
        try:
            model = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()).group(1).strip()
            facts.append(("CPU model", model))
        except (OSError, AttributeError):
            pass
        try:
            kb = int(re.search(r"MemTotal:\s*(\d+)", open("/proc/meminfo").read()).group(1))
            facts.append(("memory", "%.1f GiB" % (kb / 1048576)))
        except (OSError, AttributeError):
            pass
        facts.append(("OS", platform.platform()))
        facts.append(("load average at start", " ".join("%.2f" % x for x in os.getloadavg())))
        df = self.run(["df", "-PT", self.work], 30)
        if df.returncode == 0 and len(df.stdout.splitlines()) > 1:
            f = df.stdout.splitlines()[1].split()
            facts.append(("data file system", "%s (%s, on %s), holds every cluster's data" % (f[6], f[1], f[0])))
        jv = self.run(["java", "-version"], 60)
        facts.append(("JDK", (jv.stderr.splitlines() or ["?"])[0]))
        try:
            lock = open(os.path.join(self.root, "Cargo.lock")).read()
            facts.append(("hdfs-native", re.search(r'name = "hdfs-native"\nversion = "([^"]+)"', lock).group(1)))
        except (OSError, AttributeError):
            pass
        head, dirty = self.commit()
        facts.append(("Cairn", "commit %s%s, release build" % (head, " plus uncommitted changes in crates/" if dirty else "")))
        return [list(x) for x in facts]


def stop_process_group(p, first_signal, wait_s):
    """Stops the process group led by `p`: `first_signal`, up to `wait_s` seconds, then SIGKILL;
    children that outlived the leader (same group) get SIGKILL too."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, first_signal)
            p.wait(wait_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        except ProcessLookupError:
            pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def data_bytes(c):
    """Bytes the cluster's directory holds on disk now (allocated blocks: a deleted replica is gone)."""
    total = 0
    for dp, _, fns in os.walk(c.dir):
        for fn in fns:
            try:
                total += os.lstat(os.path.join(dp, fn)).st_blocks * 512
            except OSError:
                pass  # deleted while walking
    return total


def settle(c, baseline, what, log):
    """Waits until the replicas a run deleted are gone from the disk: `c`'s directory back within
    SETTLE_SLACK of `baseline` (its size before the run wrote), or no change for SETTLE_QUIET seconds,
    or SETTLE_MAX. Both systems delete in the background after the delete returns (HDFS's NameNode
    hands the work to 32% of its DataNodes per monitor pass, Cairn's to each at its next heartbeat), and
    unlinking a run's 3 GiB of replicas takes seconds here: a run timed meanwhile would be billed
    for the last run's clean-up, on whichever system ran next."""
    t0 = last_change = time.time()
    last = data_bytes(c)
    while last > baseline + SETTLE_SLACK:
        now = time.time()
        if now - t0 > SETTLE_MAX or now - last_change > SETTLE_QUIET:
            log("settle", c.name, "after", what, ": still %d MiB above the start after %.1fs" % (
                (last - baseline) >> 20, now - t0))
            return
        time.sleep(0.25)
        size = data_bytes(c)
        if size != last:
            last, last_change = size, time.time()
    log("settle", c.name, "after", what, ": deletions done in %.1fs" % (time.time() - t0))


def launch_cluster(kind, program, work, name, defines=(), env=None):
    """Starts a 3-DataNode cluster in its own process group, its data in work/name, its output in
    work/name.out: kind 'hdfs' runs `program minidfs` (the shared harness's MiniDFSCluster), 'cairn'
    runs `program up`; defines: -D key=value; env: the processes' environment (default: ours).
    Returns the Cluster; await_cluster() waits for it."""
    c = Cluster()
    c.kind, c.name, c.defines, c.dir = kind, name, list(defines), os.path.join(work, name)
    if kind == "hdfs":
        cmd = [program, "minidfs", "--nn-port", str(free_port()), "--http-port", str(free_port()),
               "--datanodes", "3", "--dir", c.dir, "--replication", "3", "--blocksize", str(128 << 20)]
        for d in defines:
            cmd += ["-D", d]
    else:
        cmd = [program]
        for d in defines:
            cmd += ["-D", d]
        cmd += ["up", "--dir", c.dir, "--rpc-address", "127.0.0.1:0"]
    c.cmd = cmd
    c.out = os.path.join(work, name + ".out")
    with open(c.out, "w") as fh:
        c.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    return c


def await_cluster(c, timeout=180):
    """Waits until the cluster launch_cluster() started says it is ready, then sets c.url, c.http
    (the Cairn DataNodes' HTTP addresses) and c.datanode_pids (Cairn's; both empty for HDFS).
    RuntimeError if it exits or is not ready in time; stopping it is the caller's."""
    ready = r"READY (hdfs://\S+)" if c.kind == "hdfs" else r"Cairn is up: (hdfs://\S+)"
    t = time.time()
    while time.time() - t < timeout:
        with open(c.out) as fh:
            text = fh.read()
        m = re.search(ready, text)
        if m:
            c.url = m.group(1)
            c.http = re.findall(r" http (127\.0\.0\.1:\d+)", text) if c.kind == "cairn" else []
            c.datanode_pids = [int(x) for x in re.findall(r"datanode\d+ \(pid (\d+)\)", text)]
            return c
        if c.proc.poll() is not None:
            raise RuntimeError("%s exited: %s" % (c.name, text[-1500:]))
        time.sleep(0.3)
    raise RuntimeError("%s not ready after %ds" % (c.name, timeout))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def dn_counters(c):
    """A Cairn cluster's DataNode counters (GET /metrics), summed over its DataNodes (maxima for *_max_*);
    None for HDFS or on error."""
    if not c.http:
        return None
    total = collections.Counter()
    for addr in c.http:
        try:
            with urllib.request.urlopen("http://%s/metrics" % addr, timeout=10) as r:
                for k, v in json.loads(r.read()).items():
                    if isinstance(v, (int, float)):
                        total[k] = max(total[k], v) if "_max_" in k else total[k] + v
        except (OSError, ValueError):
            return None
    return total


def dn_counter(c, name):
    m = dn_counters(c)
    return None if m is None else m.get(name, 0)
