"""The rendering step: the JSON files of a run (one per mode, in one directory) to docs/benchmarks.md (main,
plus the scale section when scale.json is there), its plots in docs/benchmarks/, and
docs/datanode-tables.md (hdfs959, checksum; render_tables). Reads nothing but the JSON, the pages it
rewrites and docs/webhdfs-bench.md, so rendering the same JSON twice writes the same files.
"""
import importlib
import json
import os

from . import render_tables
from .render_common import (MIB, SETUP_CAIRN, SETUP_HDFS, SETUP_JAVA, SETUP_NATIVE, Run, f, facts_table, pct,
                            plot, ratio)

NN_OPS = ["create", "mkdirs", "open", "fileStatus", "rename", "delete"]
MODES = ["main", "hdfs959", "checksum", "scale", "ha"]


def load(json_dir):
    """{mode: its JSON} for the modes whose file is in json_dir."""
    out = {}
    for mode in MODES:
        path = os.path.join(json_dir, mode + ".json")
        if os.path.exists(path):
            with open(path) as fh:
                out[mode] = json.load(fh)
    return out


def render_all(json_dir, out, tables_out):
    """Writes every page that json_dir has data for; returns the paths written."""
    data = load(json_dir)
    written = []
    if "main" in data or "scale" in data or "ha" in data:
        md = main_page(data.get("main") and Run(data["main"]), data.get("scale"), out, tables_out, data.get("ha"))
        with open(out, "w") as fh:
            fh.write("\n".join(md))
        written.append(out)
    if "hdfs959" in data or "checksum" in data:
        runs = {m: Run(data[m]) for m in ("hdfs959", "checksum") if m in data}
        render_tables.write_tables_page(runs, tables_out, out)
        written.append(tables_out)
    return written


def scale_section(scale):
    """The section of the scale mode (bench/cairnbench/render_scale.py, when that module is there)."""
    if scale is None:
        return []
    try:
        mod = importlib.import_module(__package__ + ".render_scale")
    except ImportError:
        return []
    return ["", mod.render_scale(scale).rstrip("\n"), ""]


def ha_section(ha):
    """The section of the ha mode (render_ha.py)."""
    if ha is None:
        return []
    from .render_ha import render_ha
    return ["", render_ha(ha).rstrip("\n"), ""]


def main_page(r, scale, out, tables_out, ha=None):
    if r is None:
        return ["# Benchmarks: Cairn and Apache HDFS 3.4.1 on the same machine", "",
                "The main measurements are not in this run's data (`bench/compare --mode main` writes them)."] + \
            scale_section(scale) + ha_section(ha)
    limits = r.data.get("limits", {}).get("results", {})
    md = head(r, limits) + namenode(r, limits) + scale_section(scale) + ha_section(ha) + data_path(r, limits)
    rel = os.path.relpath(tables_out, os.path.dirname(out))
    md += ["", "## DataNode tables (HDFS-959, HDDS-10465)", "",
           "The HDFS-959 per-item table (write and read throughput with every DataNode write-path optimisation on, each "
           "switched off in turn, all off, and real HDFS for reference) and the HDDS-10465 bytes-per-checksum table "
           "(write, read and random-read time for 512, 16 KiB and 1 MiB) are on [%s](%s): `bench/compare --mode hdfs959`, "
           "`--mode checksum`, `--mode tables` (both), or `--mode all` for everything%s." % (
               os.path.basename(tables_out), rel,
               " (this run measured them too)" if set(r.data.get("modes_in_run", [])) & {"hdfs959", "checksum"} else "")]
    md += webhdfs(out) + plots(r, out) + targets(r)
    # Said either way, so that a reader knows failures were looked for.
    md += ["## Failures in this run", ""] + (r.failures() or ["None: every run of this page's modes succeeded."]) + [""]
    md += ["Raw output of every command: `%s` (temporary: removed at the end of a run without failures unless "
           "`--keep-work`). Every repetition's figures: the JSON this page was rendered from (`bench/compare "
           "--render-only --json DIR` renders it again)." % r.data.get("log", "?"), ""]
    return md


def head(r, limits):
    p = r.p
    g = r.g
    fsync = (limits.get("fdatasync_4k") or [{}])[0]
    reps = p["reps"]
    md = ["# Benchmarks: Cairn and Apache HDFS 3.4.1 on the same machine", "",
          "Written by `%s` (do not edit by hand; run it again). Measured %s." % (r.data["command"], r.span()), "",
          "## Machine", ""] + facts_table(r.data["facts"]) + ["",
          "Everything (clients, the NameNode and 3 DataNodes of each system, the benchmark JVMs) shares these CPUs; "
          "the machine may be shared with other work, so figures are noisy. " + r.reps_sentence() +
          " " + r.order_sentence(), "",
          "## Set-up", "",
          "* " + SETUP_HDFS,
          "* " + SETUP_CAIRN,
          "* **Cairn (synconclose=true)**: a third cluster, `cairn -D dfs.datanode.synconclose=true up …`, otherwise the "
          "same: its DataNodes fsync block file, meta file and both directories when a replica is finalized. It is "
          "started after the data-path measurements, runs only the write workloads (Java and hdfs-native, each thread "
          "count, %d repetition%s) while the other two clusters stay up idle, and is stopped before blockReport. Its "
          "ratio is to HDFS with its default (synconclose=false). Cairn DataNodes' `fsync_calls` counter (from their "
          "`/metrics`) per write run of %d files × %d MiB with 3 replicas, synconclose=false → true: Java client %s → %s, "
          "hdfs-native %s → %s (hdfs-native asks for a sync at every block end either way, see Clients)." % (
              reps, "s" if reps > 1 else "", p["dfs_files"], p["size_mb"], f(g("fsyncs-java", "Cairn")),
              f(g("fsyncs-java", "Cairn-sync")), f(g("fsyncs", "Cairn")), f(g("fsyncs", "Cairn-sync"))),
          "* Clients: Hadoop's own `NNThroughputBenchmark` (remote mode, `-fs hdfs://…`) and " + SETUP_JAVA +
          " `cairn bench nn` (Cairn's Rust IPC client, one shared connection) and " + SETUP_NATIVE +
          " Same client against both systems in every row.",
          "* Both systems fsync their NameNode journal (edit log) before answering a mutation.",
          "* The benchmarks may use `../shared` (the harness) only here, in `bench/compare`, as the README says.", ""]
    md += ["## Machine limits (`cairn bench limits`)", "", "| measurement | value |", "|---|---|",
           "| sequential write with fdatasync | %s MB/s |" % f(_dig(limits, "disk_sequential_write",
                                                                 "mb_per_s_with_fdatasync")),
           "| sequential write, page cache only | %s MB/s |" % f(_dig(limits, "disk_sequential_write",
                                                                   "mb_per_s_page_cache_only")),
           "| 4 KiB append + fdatasync | p50 %s µs, %s syncs/s |" % (f(fsync.get("p50_us")), f(fsync.get("syncs_per_s"))),
           "| loopback TCP, one stream | %s MB/s |" % f(_dig(limits, "tcp_loopback_stream", "mb_per_s")),
           "| CRC32C, one core | %s MB/s |" % f(_dig(limits, "crc32c", "mb_per_s_whole_buffer")),
           "| memcpy, one core | %s MB/s |" % f(_dig(limits, "memcpy", "mb_per_s")), "",
           "(MB = 10^6 bytes here, as `dd` prints it.)", ""]
    return md


def _dig(j, *path):
    for k in path:
        if isinstance(j, dict) and k in j:
            j = j[k]
        else:
            return None
    return j


def namenode(r, limits):
    p, g = r.p, r.g
    fsync = (limits.get("fdatasync_4k") or [{}])[0]
    md = ["## NameNode: NNThroughputBenchmark operations (ops/s)", "",
          "%s operations per run, files-per-dir 4, replication 3, block size 128 MiB. *Java* = Hadoop's NNThroughputBenchmark "
          "(remote mode); *Rust* = `cairn bench nn --fs` (same calls). No machine limit applies to metadata ops directly; "
          "for mutations the bound is group commit over fdatasync (%s syncs/s for 4 KiB appends)." % (
              f(p["nn_files"]), f(fsync.get("syncs_per_s"))), "",
          "| op | threads | Cairn (Java) | HDFS (Java) | Cairn/HDFS | Cairn (Rust) | HDFS (Rust) | Cairn/HDFS |",
          "|---|---|---|---|---|---|---|---|"]
    for op in NN_OPS:
        for t in p["nn_threads"]:
            a, b = g("nnj", "Cairn", op, t), g("nnj", "HDFS", op, t)
            c, d = g("nnr", "Cairn", op, t), g("nnr", "HDFS", op, t)
            md.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (op, t, f(a), f(b), ratio(a, b), f(c), f(d), ratio(c, d)))
    md += ["", "In-process durable creates (no RPC): NNThroughputBenchmark `--fs inprocess` (its own NameNode, edit-log fsync ON) "
           "and `cairn bench nn --in-process` (Cairn's NameNode services called directly, durable edit log on a fresh directory).", "",
           "| threads | Cairn in-process | HDFS in-process | Cairn/HDFS |", "|---|---|---|---|"]
    for t in p["nn_threads"]:
        a, b = g("inproc", "Cairn", t), g("inproc", "HDFS", t)
        md.append("| %d | %s | %s | %s |" % (t, f(a), f(b), ratio(a, b)))
    br = p["br"]
    md += ["", "blockReport: %d simulated DataNodes, %d reports of %d blocks, %d blocks per file, 1 MiB blocks, 1 thread, "
           "one run (NNThroughputBenchmark called directly, as the harness cannot pass blockReport's options; "
           "`cairn bench nn --op blockReport` with 25%% of each report real blocks, 5%% of those missing, the rest fake ids)." % (
               br["datanodes"], br["reports"], br["blocks_per_report"], br["blocks_per_file"]), "",
           "| client | Cairn reports/s | HDFS reports/s | Cairn/HDFS |", "|---|---|---|---|"]
    for cl in ("NNThroughputBenchmark", "cairn bench nn"):
        a, b = g("br", "Cairn", cl), g("br", "HDFS", cl)
        md.append("| %s | %s | %s | %s |" % (cl, f(a), f(b), ratio(a, b)))
    return md


def data_path(r, limits):
    p, g = r.p, r.g
    lim_disk = _dig(limits, "disk_sequential_write", "mb_per_s_with_fdatasync")
    lim_tcp = _dig(limits, "tcp_loopback_stream", "mb_per_s")
    mib_disk = lim_disk / (MIB / 1e6) if lim_disk else None
    mib_tcp = lim_tcp / (MIB / 1e6) if lim_tcp else None
    md = ["", "## Data path: DFSIO-style, %d files × %d MiB, replication 3" % (p["dfs_files"], p["size_mb"]), "",
          "Aggregate MiB/s (all bytes / wall time; MiB = 2^20 bytes); random reads: 4 KiB at aligned offsets, %s reads per "
          "run, IOPS and p99 µs. %s %s The Java files are written, read sequentially, read at random (pread, then seek+read) "
          "and deleted; `cairn bench dfsio` does the same in one process. %% of limit: write against the disk with "
          "fdatasync (%s MB/s), read against loopback TCP (%s MB/s). hdfs-native's seek+read is a positional read "
          "(see `cairn bench dfsio`'s notes)." % (f(p["rand_reads"]), SETUP_JAVA, SETUP_NATIVE, f(lim_disk), f(lim_tcp)), "",
          "| workload | client | threads | Cairn | HDFS | Cairn/HDFS | Cairn % of limit | HDFS % of limit "
          "| Cairn (synconclose=true) | its ratio to HDFS | its % of limit |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k, unit, limit in (("write", "MiB/s", mib_disk), ("read", "MiB/s", mib_tcp), ("pread", "IOPS", None),
                           ("pread_p99", "p99 µs", None), ("seek", "IOPS", None), ("seek_p99", "p99 µs", None),
                           ("pread_amp", "read amplification", None)):
        for client in ("Java", "hdfs-native"):
            for t in p["dfs_threads"]:
                a, b = g("dfs", "Cairn", client, k, t), g("dfs", "HDFS", client, k, t)
                if a is None and b is None:
                    continue
                d = 2 if k == "pread_amp" else 0
                sy = g("dfs", "Cairn-sync", client, k, t) if k == "write" else None
                md.append("| %s (%s) | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    k, unit, client, t, f(a, d), f(b, d), ratio(a, b) if k != "pread_amp" else "–", pct(a, limit),
                    pct(b, limit), f(sy) if k == "write" else "", ratio(sy, b) if k == "write" else "",
                    pct(sy, limit) if k == "write" else ""))
    return md


def webhdfs(out):
    """bench/webhdfs-compare writes its own page; its table is repeated here."""
    web = os.path.join(os.path.dirname(out), "webhdfs-bench.md")
    md = ["", "## WebHDFS throughput (1 GiB file)", ""]
    if os.path.exists(web):
        table = [line for line in open(web).read().splitlines() if line.startswith("|")]
        md += ["Measured by `bench/webhdfs-compare` (set-up, exact commands and what limits each path: "
               "[webhdfs-bench.md](webhdfs-bench.md)); median MiB/s with (min–max):", ""] + table
    else:
        md += ["Not measured yet: `bench/webhdfs-compare` writes [webhdfs-bench.md](webhdfs-bench.md)."]
    return md


def plots(r, out):
    p = r.p
    out_dir = os.path.join(os.path.dirname(out), "benchmarks")
    os.makedirs(out_dir, exist_ok=True)
    names = []
    for op in NN_OPS:
        series = {}
        for s in ("Cairn", "HDFS"):
            series[s + " (Java)"] = [r.median("nnj", s, op, t) for t in p["nn_threads"]]
            series[s + " (Rust)"] = [r.median("nnr", s, op, t) for t in p["nn_threads"]]
        name = "nn-%s.svg" % op
        plot(os.path.join(out_dir, name), "%s: ops/s by threads" % op, "ops/s", series, p["nn_threads"])
        names.append(name)
    for k in ("write", "read", "pread"):
        series = {}
        for s in ("Cairn", "HDFS") + (("Cairn-sync",) if k == "write" else ()):
            for client in ("Java", "hdfs-native"):
                label = "%s (%s)" % ("Cairn sync" if s == "Cairn-sync" else s, client)
                series[label] = [r.median("dfs", s, client, k, t) for t in p["dfs_threads"]]
        name = "dfsio-%s.svg" % k
        plot(os.path.join(out_dir, name), "dfsio %s by threads" % k, "IOPS" if k == "pread" else "MiB/s", series,
             p["dfs_threads"])
        names.append(name)
    rel = os.path.relpath(out_dir, os.path.dirname(out))
    return ["", "## Thread sweeps", ""] + ["![%s](%s/%s)" % (n, rel, n) for n in names]


def targets(r):
    p, g = r.p, r.g

    def tgt(name, a, b, factor):
        if not a or not b or a[0] is None or b[0] is None:
            return "| %s | – | not measured |" % name
        x = a[0] / b[0]
        return "| %s | %.2f× | %s |" % (name, x, "met" if x >= factor else "not met (target %.1f×)" % factor)

    def th(t):
        return "%d thread%s" % (t, "s" if t > 1 else "")

    tt = max(p["nn_threads"])
    md = ["", "## Where Cairn stands against the targets (issue 5)", "",
          "Medians; the ratio is Cairn/HDFS with the same client.", "", "| target | Cairn/HDFS | status |", "|---|---|---|"]
    for op in NN_OPS:
        fac = 3 if op == "create" else 2
        md.append(tgt("NNThroughputBenchmark %s at %d threads ≥ %s× HDFS" % (op, tt, fac),
                      g("nnj", "Cairn", op, tt), g("nnj", "HDFS", op, tt), fac))
    for client in ("Java", "hdfs-native"):
        for t in p["dfs_threads"]:
            md.append(tgt("write (%s, %s) ≥ 1.5× HDFS" % (client, th(t)),
                          g("dfs", "Cairn", client, "write", t), g("dfs", "HDFS", client, "write", t), 1.5))
    for t in p["dfs_threads"]:
        md.append(tgt("write (Java, %s), Cairn with synconclose=true, ≥ 1.5× HDFS (synconclose=false)" % th(t),
                      g("dfs", "Cairn-sync", "Java", "write", t), g("dfs", "HDFS", "Java", "write", t), 1.5))
    for client in ("Java", "hdfs-native"):
        for t in p["dfs_threads"]:
            md.append(tgt("read (%s, %s) ≥ 1.5× HDFS" % (client, th(t)),
                          g("dfs", "Cairn", client, "read", t), g("dfs", "HDFS", client, "read", t), 1.5))
    for client in ("Java", "hdfs-native"):
        for t in p["dfs_threads"]:
            md.append(tgt("random pread (%s, %s) ≥ 2× HDFS IOPS" % (client, th(t)),
                          g("dfs", "Cairn", client, "pread", t), g("dfs", "HDFS", client, "pread", t), 2))
    for t in p["dfs_threads"]:
        amp = g("dfs", "Cairn", "hdfs-native", "pread_amp", t)
        md.append("| read amplification of random 4 KiB preads ≤ 1.1 (Cairn DataNodes' bytes sent / bytes asked, "
                  "%s) | %s | %s |" % (th(t), f(amp, 2),
                                       "not measured" if not amp else ("met" if amp[0] <= 1.1 else "not met")))
    md += [""]
    return md
