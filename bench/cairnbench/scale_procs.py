"""The processes of the scale measurement (bench/cairnbench/measure_scale.py).

One NameNode alone per system, so that its own process is what /proc shows:
HDFS 3.4.1's NameNode in a `harness minidfs --datanodes 0` JVM (the harness
`exec`s java, so the child's pid is the JVM's), Cairn's as `cairn namenode`.
Around them: a sampler of the NameNode's CPU time and resident memory
(/proc/<pid>/stat and statm, every 10 ms, with wall-clock times), Hadoop's
NNThroughputBenchmark run directly on the harness's classpath with its log
on stdout, read line by line as it runs (the harness's own `nnbench` prints
the log only at the end, too late to sample at its phase markers), Hadoop's
a timer of saveNamespace in one JVM (SaveNamespaceTimer.java, Hadoop's
client, the same for both systems), and `jcmd` for the JVM's live heap
after a full GC.
"""
import datetime
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

from .runner import stop_process_group

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
JAVA_OPENS = ["--add-opens=java.base/%s=ALL-UNNAMED" % m for m in (
    "java.lang", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
    "java.util.concurrent", "sun.nio.ch", "sun.security.x509")]
LOG4J = ("log4j.rootLogger=WARN,console\n"
         "log4j.appender.console=org.apache.log4j.ConsoleAppender\n"
         "log4j.appender.console.target=System.out\n"
         "log4j.appender.console.layout=org.apache.log4j.PatternLayout\n"
         "log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n\n"
         "log4j.logger.org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark=INFO\n"
         "log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR\n")


class Ctx:
    """What every step needs: the binaries, the work dir, the log and the failure list."""

    def __init__(self, work, cairn, harness, log, fail):
        self.work, self.cairn, self.harness, self.log, self.fail = work, cairn, harness, log, fail
        self.h = os.path.join(harness, "harness")
        with open(os.path.join(harness, "target", "classpath.txt")) as fh:
            self.cp = os.path.join(harness, "target", "classes") + ":" + fh.read().strip()
        self.log4j = os.path.join(work, "scale-log4j.properties")
        with open(self.log4j, "w") as fh:
            fh.write(LOG4J)

    def java(self, xmx, main, args):
        return (["java", "-Xmx" + xmx, "-XX:+UseG1GC", "-Djava.net.preferIPv4Stack=true",
                 "-Dlog4j.configuration=file:" + self.log4j,
                 "-Dhadoop.tmp.dir=" + os.path.join(self.work, "java-tmp")] + JAVA_OPENS +
                ["-cp", self.cp, main] + list(args))


# ------------------------------------------------------------------ /proc
def cpu_seconds(pid):
    """utime + stime of the whole process (all its threads, live and ended)."""
    with open("/proc/%d/stat" % pid) as fh:
        s = fh.read()
    rest = s[s.rindex(")") + 2:].split()  # fields from 3 (state) on; comm may hold spaces
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


def rss_bytes(pid):
    with open("/proc/%d/statm" % pid) as fh:
        return int(fh.read().split()[1]) * PAGE


class Sampler(threading.Thread):
    """Samples a process's CPU seconds and RSS every `interval` s, with time.time()."""

    def __init__(self, pid, interval=0.01):
        super().__init__(daemon=True)
        self.pid, self.interval, self.samples = pid, interval, []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                t = time.time()
                self.samples.append((t, cpu_seconds(self.pid), rss_bytes(self.pid)))
            except (OSError, ValueError, IndexError):
                return
            self.done.wait(self.interval)

    def stop(self):
        self.done.set()
        self.join(5)

    def cpu_at(self, t):
        """CPU seconds at wall time t, interpolated between the samples around it."""
        s = self.samples
        if not s or t < s[0][0] or t > s[-1][0]:
            return None
        for (t0, c0, _), (t1, c1, _) in zip(s, s[1:]):
            if t0 <= t <= t1:
                return c0 if t1 == t0 else c0 + (c1 - c0) * (t - t0) / (t1 - t0)
        return s[-1][1]

    def rss_at(self, t):
        best = None
        for ts, _, r in self.samples:
            if ts > t:
                break
            best = r
        return best


def jvm_live_heap(ctx, pid):
    """Used heap after a full GC (`jcmd GC.run`, then `GC.heap_info`), in bytes; None on error."""
    for cmd in (["jcmd", str(pid), "GC.run"], ["jcmd", str(pid), "GC.heap_info"]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            ctx.fail("jcmd %s" % " ".join(cmd[2:]), (p.stdout + p.stderr)[-400:])
            return None
    m = re.search(r"heap\s+total\s+\d+K,\s+used\s+(\d+)K", p.stdout)
    if not m:
        ctx.fail("jcmd GC.heap_info: no 'used' figure", p.stdout[-400:])
        return None
    return int(m.group(1)) * 1024


# ------------------------------------------------------------------ NameNodes
class NameNode:
    """One NameNode (kind 'HDFS' or 'Cairn') on a fixed port and directory, to be
    started, stopped and started again on the same metadata."""

    def __init__(self, ctx, kind, name, port, http_port=0):
        self.ctx, self.kind, self.name, self.port = ctx, kind, name, port
        self.http_port = http_port
        self.dir = os.path.join(ctx.work, name)
        self.url = "hdfs://127.0.0.1:%d" % port
        self.proc, self.out, self.starts = None, None, 0

    def command(self, fresh):
        if self.kind == "HDFS":
            cmd = [self.ctx.h, "minidfs", "--nn-port", str(self.port), "--http-port", str(self.http_port),
                   "--datanodes", "0", "--dir", self.dir]
            return cmd if fresh else cmd + ["--keep"]
        return [self.ctx.cairn, "namenode", "--dir", os.path.join(self.dir, "name"),
                "--rpc-address", "127.0.0.1:%d" % self.port, "--http-address", "127.0.0.1:%d" % self.http_port]

    def start(self, fresh, timeout=600):
        """Starts the NameNode; returns seconds from the process start to its first
        successful RPC (getFileInfo of /, polled every 50 ms once the port accepts
        connections, which is polled every 20 ms)."""
        if fresh and self.kind == "Cairn":
            os.makedirs(self.dir, exist_ok=True)
            p = subprocess.run([self.ctx.cairn, "namenode", "--dir", os.path.join(self.dir, "name"), "--format"],
                               capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                raise RuntimeError("cairn namenode --format: " + (p.stdout + p.stderr)[-800:])
        self.starts += 1
        self.out = os.path.join(self.ctx.work, "%s.%d.out" % (self.name, self.starts))
        fh = open(self.out, "w")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.command(fresh), stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        fh.close()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited (rc %s): %s" % (self.name, self.proc.returncode, self.output()[-1500:]))
            # A cheap TCP connect first: a client that finds the port closed
            # may wait its own retry delay (a second) before trying again.
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            except OSError:
                time.sleep(0.02)
                continue
            q = subprocess.run([self.ctx.cairn, "dfs", "-fs", self.url, "-test", "-d", "/"],
                               capture_output=True, text=True, timeout=120)
            if q.returncode == 0:
                secs = time.monotonic() - t0
                self.ctx.log(self.name, "answers RPC %.2f s after its start (%s)"
                             % (secs, "fresh" if fresh else "restart"))
                return secs
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("%s gave no successful RPC in %d s" % (self.name, timeout))

    @property
    def pid(self):
        return self.proc.pid

    def output(self):
        try:
            with open(self.out, errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    def log_text(self):
        """The NameNode's own log: minidfs.log for HDFS, stderr for Cairn (all starts)."""
        if self.kind == "HDFS":
            paths = [os.path.join(self.dir, "minidfs.log")]
        else:
            paths = [os.path.join(self.ctx.work, "%s.%d.out" % (self.name, i)) for i in range(1, self.starts + 1)]
        text = ""
        for p in paths:
            try:
                with open(p, errors="replace") as fh:
                    text += fh.read()
            except OSError:
                pass
        return text

    def stop(self):
        p = self.proc
        if p is None:
            return
        stop_process_group(p, signal.SIGTERM, 120)  # not SIGINT: background jobs inherit it ignored
        self.proc = None

    def image(self):
        """(txid, bytes) of the newest fsimage_<txid> under the metadata directory, or None."""
        best = None
        for dp, _, fns in os.walk(self.dir):
            for fn in fns:
                m = re.fullmatch(r"fsimage_(\d+)", fn)
                if m and (best is None or int(m.group(1)) > best[0]):
                    best = (int(m.group(1)), os.path.getsize(os.path.join(dp, fn)))
        return best


# ------------------------------------------------------------------ NNThroughputBenchmark
START_RE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO \S+: Starting (\d+) (\w+)\(s\)\.")


def nnbench(ctx, nn, op, threads, files, extra=(), timeout=1800):
    """Runs NNThroughputBenchmark against nn with the NameNode's /proc sampled throughout.

    The timed phase is what the benchmark itself times: from its log line
    "Starting N <op>(s)." (logged right after it takes its start time, before
    its worker threads start; the preparation of open/fileStatus/rename/delete
    logs its own "Starting N create(s)." first, which is skipped) to that time
    plus its "Elapsed Time" (ms; the end of its busy-wait on the workers, before
    its clean-up: the delete of its base directory, or with -keepResults safe
    mode + saveNamespace). The start is taken from the line's own timestamp and
    checked against the moment the line was read; the end from the sample series.
    Returns a dict, or None after ctx.fail."""
    count_flag = "-dirs" if op == "mkdirs" else "-files"
    args = ["-fs", nn.url, "-op", op, "-threads", str(threads), count_flag, str(files)] + list(extra)
    cmd = ctx.java("2g", "org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark", args)
    what = "NNThroughputBenchmark -op %s -threads %d %s %d %s on %s" % (op, threads, count_flag, files,
                                                                        " ".join(extra), nn.kind)
    sampler = Sampler(nn.pid)
    sampler.start()
    cpu0 = cpu_seconds(nn.pid)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    timer = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
    timer.start()
    lines, start, stats, failed = [], None, {}, None
    in_stats = False
    try:
        for line in p.stdout:
            now = time.time()
            lines.append(line.rstrip("\n"))
            m = START_RE.match(line)
            if m and m.group(3) == op:
                logged = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
                start = {"read_at": now, "logged_at": logged, "ops": int(m.group(2))}
            if "StatsDaemon" in line and "failed" in line:
                failed = line.strip()
                os.killpg(p.pid, signal.SIGKILL)
            body = line.split(": ", 1)[-1].strip()
            if re.match(r"^--- %s stats\s+---$" % re.escape(op), body):
                in_stats = True
            elif in_stats:
                for key, label in (("ops", "# operations:"), ("elapsed_ms", "Elapsed Time:"),
                                   ("ops_per_sec", "Ops per sec:"), ("avg_ms", "Average Time:")):
                    if body.startswith(label):
                        stats[key] = float(body[len(label):].strip())
        p.wait()
    finally:
        timer.cancel()
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        sampler.stop()
    with open(os.path.join(ctx.work, "nnbench.log"), "a") as fh:
        fh.write("$ %s\n%s\n" % (" ".join(cmd[-len(args) - 1:]), "\n".join(lines[-200:])))
    cpu_run = cpu_seconds(nn.pid) - cpu0
    if failed or p.returncode != 0 or start is None or "elapsed_ms" not in stats or "ops" not in stats:
        ctx.fail(what, "rc %s; %s" % (p.returncode, failed or " | ".join(lines[-12:])))
        return None
    lag = start["read_at"] - start["logged_at"]
    # The log's clock and ours are the same wall clock; a large lag means the
    # timestamp was not parsed in the right zone: then use the moment it was read.
    t0 = start["logged_at"] if abs(lag) < 1.0 else start["read_at"]
    t1 = t0 + stats["elapsed_ms"] / 1000.0
    c0, c1 = sampler.cpu_at(t0), sampler.cpu_at(t1)
    if c0 is None or c1 is None or stats["ops"] <= 0:
        ctx.fail(what, "the CPU samples do not cover the timed phase")
        return None
    return {"op": op, "threads": threads, "files": files, "ops": stats["ops"], "elapsed_ms": stats["elapsed_ms"],
            "ops_per_sec": stats.get("ops_per_sec"), "cpu_s": c1 - c0, "cpu_us_per_op": (c1 - c0) * 1e6 / stats["ops"],
            "cpu_s_whole_run": cpu_run, "marker_lag_ms": lag * 1000, "samples": len(sampler.samples),
            "rss_end_of_timed_phase": sampler.rss_at(t1)}


def rustbench(ctx, nn, op, threads, files, timeout=600):
    """Runs `cairn bench nn --json` (hdfs-native's client, one shared connection)
    against nn; the NameNode's CPU is what that tool reads from /proc/<pid>/stat
    (`--nn-pid`) right before and right after its timed phase, its preparation
    and clean-up excluded. Returns a dict shaped like nnbench's, or None after ctx.fail."""
    cmd = [ctx.cairn, "bench", "nn", "--json", "--fs", nn.url, "--nn-pid", str(nn.pid), "--op", op,
           "--threads", str(threads), "--files", str(files)]
    what = "cairn bench nn --op %s --threads %d --files %d on %s" % (op, threads, files, nn.kind)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        ctx.fail(what, "no result in %d s" % timeout)
        return None
    try:
        row = json.loads(p.stdout)["results"][0] if p.returncode == 0 else None
    except (ValueError, KeyError, IndexError, TypeError) as e:
        ctx.fail(what, "bad JSON: %s" % e)
        return None
    if row is None or row.get("nn_cpu_us_per_op") is None:
        ctx.fail(what, "rc %s; %s" % (p.returncode, (p.stderr or p.stdout)[-600:]))
        return None
    return {"op": op, "threads": threads, "files": files, "ops": row.get("ops"), "elapsed_ms": row.get("elapsed_ms"),
            "ops_per_sec": row.get("ops_per_sec"), "cpu_us_per_op": row["nn_cpu_us_per_op"],
            "cpu_s": (row.get("nn_cpu_ms") or 0) / 1000.0, "p99_us": row.get("p99_us")}


# ------------------------------------------------------------------ saveNamespace
TIMER_JAVA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "SaveNamespaceTimer.java")


def save_namespace(ctx, nn, count, timeout=1800):
    """Safe mode, then `count` pairs of (getFileInfo, saveNamespace) timed inside one
    JVM by SaveNamespaceTimer.java (Hadoop's client, the same for both systems).
    Returns a list of {noop_s, save_s, image_s}, or [] after ctx.fail."""
    cmd = ctx.java("512m", TIMER_JAVA, [nn.url, str(count)])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    out = []
    for line in p.stdout.splitlines():
        if line.startswith("RESULT save "):
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            out.append({"noop_s": float(kv["noop_s"]), "save_s": float(kv["save_s"]),
                        "image_s": float(kv["save_s"]) - float(kv["noop_s"]), "saved": kv.get("saved")})
    if p.returncode != 0 or len(out) != count:
        ctx.fail("saveNamespace timer on %s" % nn.kind, "rc %d: %s" % (p.returncode, (p.stdout + p.stderr)[-600:]))
        return []
    return out


# ------------------------------------------------------------------ the NameNodes' own logs
HDFS_TS = r"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d,\d{3})"
CAIRN_TS = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z"


def _hdfs_time(s):
    return datetime.datetime.strptime(s.replace("T", " "), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _cairn_time(s):
    whole, frac = s.split(".")
    t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + float("0." + frac)


def image_saves_from_log(nn):
    """Durations (s) of the image writes the NameNode logged, oldest first.

    HDFS: from "Saving image file F" to "Image file F of size N bytes saved in
    S seconds" (FSImageFormatProtobuf; the printed S is whole seconds, so the
    two lines' timestamps are used). Cairn: from the "edit log segment open"
    line of the roll that saveNamespace does first to its "New namespace image
    has been created" line."""
    text = nn.log_text()
    out = []
    if nn.kind == "HDFS":
        open_at = {}
        for m in re.finditer(HDFS_TS + r".*?Saving image file (\S+)", text):
            open_at[m.group(2)] = _hdfs_time(m.group(1))
        for m in re.finditer(HDFS_TS + r".*?Image file (\S+) of size (\d+) bytes saved", text):
            if m.group(2) in open_at:
                out.append(_hdfs_time(m.group(1)) - open_at[m.group(2)])
        return out
    roll = None
    for line in text.splitlines():
        m = re.match(CAIRN_TS, line.strip())
        if not m:
            continue
        if "edit log segment open" in line:
            roll = _cairn_time(m.group(1))
        elif "New namespace image has been created" in line and roll is not None:
            out.append(_cairn_time(m.group(1)) - roll)
            roll = None
    return out
