"""The scale measurement (`bench/compare --mode scale`, `bench/measure-scale`).

Cairn's NameNode beside HDFS 3.4.1's, each alone (no DataNodes), in the same
run, for the figures of issue 14's scale table:

1. memory per file: Hadoop's NNThroughputBenchmark `-op create -threads T
   -files N -keepResults` (N empty files, 4 per directory: N/4 directories)
   over RPC; Cairn: NameNode RSS (VmRSS) after - before, / N; HDFS: live heap
   after a full GC (`jcmd GC.run` + `GC.heap_info`) after - before, / N, and
   its RSS the same way;
2. restart per million files: with that namespace saved, the NameNode is
   stopped (SIGTERM) and started again on the same directory; seconds from
   the process start to its first successful RPC (getFileInfo, polled every
   50 ms once the port accepts), minus the same on an empty namespace, per million files;
3. image write per million files: saveNamespace (in safe mode) timed inside
   one JVM of Hadoop's client (SaveNamespaceTimer.java) minus a getFileInfo,
   and the write as the NameNodes' own logs time it; image size per file;
4. CPU microseconds per operation for every NNThroughputBenchmark op (16
   threads, 20,000 files): the NameNode's utime+stime over the op's timed
   phase only (scale_procs.nnbench says how the phase is found); then the
   same ops from `cairn bench nn` (hdfs-native's client, scale_procs.rustbench),
   whose client spends less of the 2 shared cores per call than
   NNThroughputBenchmark's (whose coordinator also spins on one), so more
   calls arrive during each of the edit log's group commits.

`run(args)` returns one JSON-ready dict (render_scale.render_scale turns it
into the Markdown section). args is an argparse.Namespace or a dict; every
attribute is optional:
  scale_files (500,000; 20,000 with quick), scale_cpu_files (20,000; 2,000
  with quick), scale_threads (16), reps (3; 1 with quick), quick,
  scale_ops (the six ops), scale_parts ("memory,cpu"),
  cairn_bin (a cairn binary to use as is; default: a copy of
  target/release/cairn in the work dir), harness_dir (a built copy of the
  shared harness; default: copied and built in the work dir), work_dir
  (default: a new temp dir), log (a function of *args printing one line),
  command (the command line to quote on the page). From bench/compare it
  also takes: bench (its runner.Bench: log, fail, command), cairn, harness
  (the built harness's script), work, params (its "reps").
"""
import datetime
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time

from . import scale_procs as sp
from .runner import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS_SRC = os.path.join(ROOT, "..", "shared", "anchors", "hdfs-harness")
OPS = ["create", "mkdirs", "open", "fileStatus", "rename", "delete"]
SYSTEMS = ["HDFS", "Cairn"]


def _opt(args, name, default=None):
    v = args.get(name) if isinstance(args, dict) else getattr(args, name, None)
    return default if v is None else v


def machine_facts(work):
    facts = {"CPUs": str(os.cpu_count()), "OS": platform.platform(),
             "load average at start": " ".join("%.2f" % x for x in os.getloadavg())}
    try:
        with open("/proc/cpuinfo") as fh:
            facts["CPU model"] = re.search(r"model name\s*:\s*(.*)", fh.read()).group(1).strip()
        with open("/proc/meminfo") as fh:
            facts["memory"] = "%.1f GiB" % (int(re.search(r"MemTotal:\s*(\d+)", fh.read()).group(1)) / 1048576)
    except (OSError, AttributeError):
        pass
    jv = subprocess.run(["java", "-version"], capture_output=True, text=True)
    facts["JDK"] = (jv.stderr.splitlines() or ["?"])[0]
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", "crates"],
                           capture_output=True, text=True).stdout.strip()
    facts["Cairn"] = "commit %s%s, release build" % (head.strip(),
                                                     " plus uncommitted changes in crates/" if dirty else "")
    df = subprocess.run(["df", "-PT", work], capture_output=True, text=True).stdout.splitlines()
    if len(df) > 1:
        f = df[1].split()
        facts["data file system"] = "%s (%s, on %s)" % (f[6], f[1], f[0])
    return facts


def prepare(args, work, log):
    """The cairn binary and the built harness: given, or made in the work dir."""
    cairn = _opt(args, "cairn_bin") or _opt(args, "cairn")
    if not cairn:
        cairn = os.path.join(work, "bin", "cairn")  # a copy: a rebuild during the run does not change it
        os.makedirs(os.path.dirname(cairn), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, "target", "release", "cairn"), cairn)
    harness = _opt(args, "harness_dir")
    if not harness and _opt(args, "harness"):
        harness = os.path.dirname(_opt(args, "harness"))  # bench/compare passes the built harness's script
    if not harness:
        harness = os.path.join(work, "hdfs-harness")
        shutil.copytree(HARNESS_SRC, harness, ignore=shutil.ignore_patterns("target", "data"))
        log("building the harness")
        p = subprocess.run([os.path.join(harness, "harness"), "build"], capture_output=True, text=True, timeout=1200)
        if p.returncode != 0:
            raise RuntimeError("harness build failed: " + (p.stdout + p.stderr)[-800:])
    return cairn, harness


def _memory(ctx, nn):
    """NameNode memory now: RSS, and for HDFS the live heap after a full GC."""
    time.sleep(1.0)  # let the last replies and clean-up settle
    m = {"rss": _vmrss(nn.pid)}
    if nn.kind == "HDFS":
        m["heap"] = sp.jvm_live_heap(ctx, nn.pid)
    return m


def _mem_text(m):
    heap = m.get("heap")
    return "RSS %d KiB" % (m["rss"] // 1024) + ("" if heap is None else ", live heap %d KiB" % (heap // 1024))


def _vmrss(pid):
    with open("/proc/%d/status" % pid) as fh:
        return int(re.search(r"VmRSS:\s*(\d+) kB", fh.read()).group(1)) * 1024


def scale_rep(ctx, kind, files, threads):
    """One repetition of figures 1-3 on a new NameNode of `kind`."""
    nn = sp.NameNode(ctx, kind, "%s-scale-%d" % (kind.lower(), time.time_ns()), free_port())
    r = {"files": files, "dirs": files // 4, "threads": threads}
    try:
        r["first_start_s"] = nn.start(fresh=True)
        nn.stop()
        # The restart of an empty namespace: the fixed cost of starting the process.
        r["restart_empty_s"] = nn.start(fresh=False)
        r["empty_image_bytes"] = (nn.image() or (0, None))[1]
        r["before"] = _memory(ctx, nn)
        ctx.log(kind, "memory before:", _mem_text(r["before"]))
        logged0 = len(sp.image_saves_from_log(nn))
        b = sp.nnbench(ctx, nn, "create", threads, files, ["-keepResults"])
        if b is None:
            return r
        r["create"] = b
        r["after"] = _memory(ctx, nn)
        ctx.log(kind, "memory after %d files:" % files, _mem_text(r["after"]))
        r["saves"] = sp.save_namespace(ctx, nn, 3)
        # Every image write logged since the create run began: the benchmark's
        # own saveNamespace (-keepResults) and, where the NameNode logs them,
        # the three above (Cairn's roll line is missing when no edit came since).
        r["image_s_logged"] = sp.image_saves_from_log(nn)[logged0:]
        img = nn.image()
        r["image_txid"], r["image_bytes"] = img if img else (None, None)
        nn.stop()
        r["restart_full_s"] = nn.start(fresh=False)
        c = subprocess.run([ctx.cairn, "dfs", "-fs", nn.url, "-count", "/nnThroughputBenchmark"],
                           capture_output=True, text=True, timeout=600)
        cols = c.stdout.split()
        r["files_after_restart"] = int(cols[1]) if c.returncode == 0 and len(cols) >= 4 else None
        if r["files_after_restart"] != files:
            ctx.fail("%s after restart: %s files under /nnThroughputBenchmark, expected %d"
                     % (kind, r["files_after_restart"], files), (c.stdout + c.stderr)[-300:])
    finally:
        nn.stop()
        if not _opt(ctx.args, "keep_work"):
            shutil.rmtree(nn.dir, ignore_errors=True)
    return r


def cpu_phase(ctx, ops, threads, files, reps):
    """Figure 4: each op on both NameNodes, repetitions interleaved (HDFS, Cairn, HDFS, ...),
    each repetition with NNThroughputBenchmark and then `cairn bench nn` (hdfs-native's client).
    Returns ({system: {op: [NNThroughputBenchmark runs]}}, the same for `cairn bench nn`)."""
    res = {s: {op: [] for op in ops} for s in SYSTEMS}
    rust = {s: {op: [] for op in ops} for s in SYSTEMS}
    nns = {}
    try:
        for s in SYSTEMS:
            nns[s] = sp.NameNode(ctx, s, "%s-cpu" % s.lower(), free_port())
            nns[s].start(fresh=True)
            # Warm-up (not counted): JIT-compiles HDFS's paths, fills both processes' caches.
            ctx.log("warm-up fileStatus on", s)
            sp.nnbench(ctx, nns[s], "fileStatus", threads, files)
        for op in ops:
            for rep in range(reps):
                for s in SYSTEMS:
                    ctx.log("CPU per op:", s, op, "rep", rep + 1)
                    b = sp.nnbench(ctx, nns[s], op, threads, files)
                    if b:
                        ctx.log("  %.0f ops/s, %.1f us CPU/op (timed phase), marker read %.0f ms after its timestamp"
                                % (b["ops_per_sec"] or 0, b["cpu_us_per_op"], b["marker_lag_ms"]))
                        res[s][op].append(b)
                    r = sp.rustbench(ctx, nns[s], op, threads, files)
                    if r:
                        ctx.log("  cairn bench nn: %.0f ops/s, %.1f us CPU/op (timed phase)"
                                % (r["ops_per_sec"] or 0, r["cpu_us_per_op"]))
                        rust[s][op].append(r)
    finally:
        for nn in nns.values():
            nn.stop()
            if not _opt(ctx.args, "keep_work"):
                shutil.rmtree(nn.dir, ignore_errors=True)
    return res, rust


def run(args):
    """Measures; returns the dict render_scale.render_scale takes (see the module doc)."""
    bench = _opt(args, "bench")  # bench/compare's runner.Bench, when called from there
    quick = bool(_opt(args, "quick", False))
    files = int(_opt(args, "scale_files", 20000 if quick else 500000))
    cpu_files = int(_opt(args, "scale_cpu_files", 2000 if quick else 20000))
    threads = int(_opt(args, "scale_threads", 16))
    reps = int(_opt(args, "reps", (_opt(args, "params") or {}).get("reps") or (1 if quick else 3)))
    ops = list(_opt(args, "scale_ops", OPS))
    parts = str(_opt(args, "scale_parts", "memory,cpu")).split(",")
    log = _opt(args, "log") or (bench.log if bench else
                                lambda *a: print("[%s]" % time.strftime("%H:%M:%S"), *a, flush=True))
    work = _opt(args, "work_dir") or _opt(args, "work") or tempfile.mkdtemp(prefix="cairn-scale-")
    failures = []

    def fail(what, detail=""):
        detail = re.sub(r"\s+", " ", detail or "").strip()[-600:]
        failures.append(what + (": " + detail if detail else ""))
        if bench:
            bench.fail(what, detail)  # also on bench/compare's list of the run's failures
        else:
            log("FAILED", failures[-1])

    started = datetime.datetime.now(datetime.timezone.utc)
    data = {"kind": "scale", "format": 1, "started": started.isoformat(timespec="seconds"),
            "command": _opt(args, "command") or (bench.command if bench else "bench/measure-scale"), "work_dir": work,
            "config": {"files": files, "dirs": files // 4, "cpu_files": cpu_files, "threads": threads, "reps": reps,
                       "ops": ops, "parts": parts, "hdfs_xmx": os.environ.get("HARNESS_XMX", "2g")},
            "facts": machine_facts(work), "scale": {s: [] for s in SYSTEMS}, "cpu": {}, "cpu_rust": {},
            "failures": failures}
    cairn, harness = prepare(args, work, log)
    ctx = sp.Ctx(work, cairn, harness, log, fail)
    ctx.args = args
    if "memory" in parts:
        for rep in range(reps):
            for s in SYSTEMS:
                log("scale rep %d/%d: %s, %d files" % (rep + 1, reps, s, files))
                try:
                    data["scale"][s].append(scale_rep(ctx, s, files, threads))
                except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                    fail("scale rep %d on %s stopped" % (rep + 1, s), "%s: %s" % (type(e).__name__, e))
    if "cpu" in parts:
        try:
            data["cpu"], data["cpu_rust"] = cpu_phase(ctx, ops, threads, cpu_files, reps)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            fail("CPU-per-op phase stopped", "%s: %s" % (type(e).__name__, e))
    data["facts"]["load average at end"] = " ".join("%.2f" % x for x in os.getloadavg())
    data["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return data
