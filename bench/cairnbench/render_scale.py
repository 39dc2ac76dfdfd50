"""Renders the scale measurement (measure_scale.run's dict) as a Markdown section.

`render_scale(data) -> str`: the table (HDFS, Cairn, Cairn / HDFS), the CPU
per operation table beside ops/s, how each figure was measured, the number
of repetitions and the failed runs. Pure: reads only `data`.
"""
import statistics

SECTION_TITLE = "## NameNode at scale: memory, restart, image, CPU per operation"


def _stats(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return (statistics.median(v), min(v), max(v), len(v))


def _fmt(s, digits=0):
    if s is None:
        return "–"
    m, lo, hi, n = s
    one = "{:,.%df}" % digits
    if n == 1 or one.format(lo) == one.format(hi):
        return one.format(m)
    return "%s (%s–%s)" % (one.format(m), one.format(lo), one.format(hi))


def _ratio(a, b):
    if a is None or b is None or not b[0]:
        return "–"
    return "%.2f×" % (a[0] / b[0])


def _dig(d, *path):
    for p in path:
        if not isinstance(d, dict) or d.get(p) is None:
            return None
        d = d[p]
    return d


def _per_file(r, key):
    a, b, n = _dig(r, "after", key), _dig(r, "before", key), r.get("files")
    return None if a is None or b is None or not n else (a - b) / n


def _per_million(secs, r):
    return None if secs is None or not r.get("files") else secs * 1e6 / r["files"]


def _median(v):
    v = [x for x in v or [] if x is not None]
    return statistics.median(v) if v else None


def scale_figures(reps):
    """Per-figure lists of values (one per repetition) for one system's scale runs."""
    f = {}

    def put(key, value):
        f.setdefault(key, []).append(value)

    for r in reps:
        put("mem_rss", _per_file(r, "rss"))
        put("mem_heap", _per_file(r, "heap"))
        end = _dig(r, "create", "rss_end_of_timed_phase")
        before = _dig(r, "before", "rss")
        put("mem_rss_presave", None if end is None or before is None else (end - before) / r["files"])
        full, empty = r.get("restart_full_s"), r.get("restart_empty_s")
        put("restart_pm", None if full is None or empty is None else _per_million(full - empty, r))
        put("restart_full", full)
        put("restart_empty", empty)
        put("image_pm", _per_million(_median([s.get("image_s") for s in r.get("saves") or []]), r))
        put("image_log_pm", _per_million(_median(r.get("image_s_logged")), r))
        put("image_bpf", None if r.get("image_bytes") is None else r["image_bytes"] / r["files"])
        put("create_ops", _dig(r, "create", "ops_per_sec"))
    return {k: _stats(v) for k, v in f.items()}


ROWS = [
    # key, label, digits; a ratio row compares Cairn's key with HDFS's key2
    ("mem_rss", "mem_heap", "Memory per file, bytes: Cairn RSS ÷ HDFS live heap after a full GC", 0),
    ("mem_rss", "mem_rss", "Memory per file, bytes: RSS (resident memory) of both", 0),
    ("mem_rss_presave", "mem_rss_presave", "Memory per file, bytes: RSS at the end of the create phase, before the "
                                           "benchmark's saveNamespace", 0),
    ("restart_pm", "restart_pm", "Restart per million files, s: to first RPC, minus an empty namespace's restart", 2),
    ("restart_full", "restart_full", "Restart with the namespace, s (to first RPC, as measured)", 2),
    ("restart_empty", "restart_empty", "Restart with an empty namespace, s (process start, no files)", 2),
    ("image_pm", "image_pm", "Image write per million files, s: saveNamespace as the client times it", 2),
    ("image_log_pm", "image_log_pm", "Image write per million files, s: as the NameNode's own log times it", 2),
    ("image_bpf", "image_bpf", "Image size per file, bytes (directories counted in)", 0),
    ("create_ops", "create_ops", "create ops/s while building the namespace (16 threads, -keepResults)", 0),
]


def _scale_table(data):
    hd, ca = (scale_figures(_dig(data, "scale", s) or []) for s in ("HDFS", "Cairn"))
    md = ["| figure | HDFS 3.4.1 | Cairn | Cairn ÷ HDFS |", "|---|---:|---:|---:|"]
    for ck, hk, label, digits in ROWS:
        c, h = ca.get(ck), hd.get(hk)
        md.append("| %s | %s | %s | %s |" % (label, _fmt(h, digits), _fmt(c, digits), _ratio(c, h)))
    return md


def _cpu_table(data, key):
    cpu = data.get(key) or {}
    md = ["| operation | HDFS CPU µs/op | Cairn CPU µs/op | Cairn ÷ HDFS (CPU) | HDFS ops/s | Cairn ops/s "
          "| Cairn ÷ HDFS (ops/s) |", "|---|---:|---:|---:|---:|---:|---:|"]
    for op in _dig(data, "config", "ops") or []:
        runs = {s: _dig(cpu, s, op) or [] for s in ("HDFS", "Cairn")}
        us = {s: _stats([r.get("cpu_us_per_op") for r in runs[s]]) for s in runs}
        ops = {s: _stats([r.get("ops_per_sec") for r in runs[s]]) for s in runs}
        md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            op, _fmt(us["HDFS"], 1), _fmt(us["Cairn"], 1), _ratio(us["Cairn"], us["HDFS"]),
            _fmt(ops["HDFS"]), _fmt(ops["Cairn"]), _ratio(ops["Cairn"], ops["HDFS"])))
    return md


def _how(data):
    c = data.get("config") or {}
    files, dirs, threads = c.get("files", 0), c.get("dirs", 0), c.get("threads", 0)
    return [
        "How each figure was measured (both NameNodes alone, without DataNodes, one after the other in the same run):",
        "",
        "* **HDFS**: Apache Hadoop 3.4.1's NameNode in a `MiniDFSCluster` with no DataNodes (`./harness minidfs "
        "--datanodes 0`, the shared harness, `-Xmx%s`, G1, edit-log fsync on, audit log off as Hadoop ships it); "
        "its process is that JVM. **Cairn**: `cairn namenode` alone (release build), durable edit log." % c.get(
            "hdfs_xmx", "2g"),
        "* **Namespace**: Hadoop's NNThroughputBenchmark (the harness's classpath, run directly so that its log "
        "is read as it runs) `-op create -threads %d -files %s -keepResults` over RPC: %s empty files, left open "
        "(the benchmark does not close them), 4 per directory, in %s directories; at its end the benchmark "
        "enters safe mode and calls saveNamespace." % (threads, "{:,}".format(files), "{:,}".format(files),
                                                       "{:,}".format(dirs)),
        "* **Memory per file**: (after − before) ÷ files. Before: the NameNode just restarted on its empty "
        "namespace; after: 1 s after the benchmark ended. RSS is `VmRSS` from `/proc/<pid>/status`; HDFS's live "
        "heap is the *used* figure of `jcmd <pid> GC.heap_info` right after `jcmd <pid> GC.run` (a full GC). "
        "The pre-save row takes RSS from `/proc/<pid>/statm`, sampled every 10 ms, at the end of the timed "
        "create phase (see CPU below), before the benchmark's own saveNamespace.",
        "* **Restart**: after the saves below, the NameNode is stopped (SIGTERM) and started again on the same "
        "directory (`minidfs --keep`; `cairn namenode` on the same `--dir`); the time is from the process start "
        "to the first successful RPC (`cairn dfs -test -d /`, a getFileInfo, polled every 50 ms once the port "
        "accepts TCP connections, which is tried every 20 ms). The same "
        "was measured on the empty namespace before the benchmark; per million files = (with files − empty) "
        "× 10⁶ ÷ files. That the namespace came back is checked with `-count /nnThroughputBenchmark`.",
        "* **Image write**: `SaveNamespaceTimer.java` (bench/cairnbench; Hadoop 3.4.1's `DFSClient`, the same "
        "client for both, in one JVM so that no JVM start-up is timed) enters safe mode, then, three times, "
        "times a getFileInfo (an RPC's round trip) and a `saveNamespace(0, 0)` (always writes an image); "
        "image write = saveNamespace − getFileInfo, median of the three, × 10⁶ ÷ files. The NameNodes' own "
        "logs, over every image written since the create run began (the benchmark's own saveNamespace and "
        "the three): HDFS from `Saving image file F` to `Image file F … saved` (its printed \"saved in N "
        "seconds\" is whole seconds, so the two lines' timestamps are used); Cairn from the `edit log segment "
        "open` of the roll that starts saveNamespace to `New namespace image has been created` (only the "
        "benchmark's save: with no edit since, Cairn does not roll and logs no start). Image size: the newest "
        "`fsimage_<txid>` in the metadata directory ÷ files.",
        "* **CPU per operation**: NNThroughputBenchmark `-op OP -threads %d -files %s` (`-dirs` for mkdirs) "
        "over RPC on a fresh NameNode of each system (one warm-up `fileStatus` run first, not counted); "
        "repetitions alternate HDFS, Cairn. The NameNode process's utime+stime (`/proc/<pid>/stat`, sampled "
        "every 10 ms) over the benchmark's timed phase only: from its log line `Starting N OP(s).` (logged "
        "right after it takes its start time, before its worker threads start; its timestamp is used, and "
        "checked against when the line was read) to that time plus its `Elapsed Time`, so the preparation "
        "of open/fileStatus/rename/delete (creating the files) and the clean-up (deleting them) are not "
        "counted. ÷ operations. ops/s is the benchmark's own figure (operations ÷ elapsed time of that "
        "phase)." % (threads, "{:,}".format(c.get("cpu_files", 0))),
        "* **CPU per operation, `cairn bench nn`**: right after each NNThroughputBenchmark run above, on the "
        "same NameNode, `cairn bench nn --fs URL --nn-pid PID --op OP --threads %d --files %d` (hdfs-native's "
        "client: %d tasks on one shared connection, the calls NNThroughputBenchmark makes). The tool reads the "
        "NameNode's utime+stime from `/proc/<pid>/stat` right before and right after its timed phase (10 ms "
        "ticks; the preparation and clean-up are outside it) ÷ operations; ops/s is its own figure. Its "
        "client spends less of the 2 shared cores per call than NNThroughputBenchmark's, so more calls "
        "arrive while the edit log syncs and each group commit (one write and one cache flush, whatever "
        "it holds) is shared by more mutations: the two tables bracket what a mutation costs." % (
            threads, c.get("cpu_files", 0), threads),
        "* The benchmark's coordinator thread busy-waits for its workers (one core spinning) and its client "
        "shares the machine's CPUs with the NameNode, so ops/s is capped by the client; CPU per operation "
        "and memory are the NameNode's own. Other work on the machine makes times noisy (restart, image "
        "write, ops/s); CPU time and memory are less affected.",
        ""]


def render_scale(data):
    """The Markdown section for docs/benchmarks.md (ends with a newline)."""
    c = data.get("config") or {}
    reps = c.get("reps", 1)
    md = [SECTION_TITLE, "",
          "Measured by `%s`, %s – %s. %s" % (
              data.get("command", "bench/measure-scale"), (data.get("started") or "?").replace("T", " "),
              (data.get("finished") or "?").replace("T", " "),
              "Each figure is the median of %d repetitions with (min–max)." % reps if reps > 1 else
              "**One repetition per figure**: no medians."), ""]
    facts = data.get("facts") or {}
    if facts:
        md += ["Machine: " + "; ".join("%s: %s" % kv for kv in facts.items()) + ".", ""]
    parts = c.get("parts") or ["memory", "cpu"]
    not_run = "Not measured in this run (`--parts %s`)." % ",".join(parts)
    md += ["### Memory, restart and image at %s files" % "{:,}".format(c.get("files", 0)), ""]
    md += (_scale_table(data) if "memory" in parts else [not_run]) + [""]
    md += ["### CPU time per operation (%s operations, %d threads)" % ("{:,}".format(c.get("cpu_files", 0)),
                                                                       c.get("threads", 0)), ""]
    md += (_cpu_table(data, "cpu") if "cpu" in parts else [not_run]) + [""]
    md += ["### CPU time per operation, `cairn bench nn` as the client (%s operations, %d tasks)" % (
        "{:,}".format(c.get("cpu_files", 0)), c.get("threads", 0)), ""]
    md += (_cpu_table(data, "cpu_rust") if "cpu" in parts and "cpu_rust" in data else [not_run]) + [""]
    md += _how(data)
    counts = []
    for s in ("HDFS", "Cairn"):
        n = len(_dig(data, "scale", s) or [])
        k = min([len(v) for v in (_dig(data, "cpu", s) or {}).values()] or [0])
        kr = min([len(v) for v in (_dig(data, "cpu_rust", s) or {}).values()] or [0])
        counts.append("%s: %d of %d scale repetitions, at least %d of %d per operation (`cairn bench nn`: %d of %d)"
                      % (s, n, reps, k, reps, kr, reps))
    md += ["Repetitions: " + "; ".join(counts) + ".", ""]
    fails = data.get("failures") or []
    md += (["Failed runs in this measurement:", ""] + ["* `%s`" % f.replace("`", "'") for f in fails]
           if fails else ["Failed runs: none."]) + [""]
    return "\n".join(md)
