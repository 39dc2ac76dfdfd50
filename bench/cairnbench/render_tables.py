"""docs/datanode-tables.md from hdfs959.json and checksum.json: a section per mode; a mode with no JSON keeps
its section of the page as it was (between the <!-- begin/end --> markers).
"""
import os
import re

from .render_common import NATIVE_BUG, SETUP_CAIRN, SETUP_HDFS, SETUP_JAVA, SETUP_NATIVE, f, facts_table, pct, ratio

TITLES = {"hdfs959": "## HDFS-959: each DataNode write-path optimisation switched off in turn",
          "checksum": "## HDDS-10465: bytes per checksum"}


def _threads(p):
    t = p["table_threads"]
    return t, "s" if t > 1 else ""


def hdfs959_section(r):
    p, g = r.p, r.g
    md = [TITLES["hdfs959"], "",
          "Measured by `%s`, %s. %s" % (r.data["command"], r.span(), r.reps_sentence()), "",
          "Workload: %d files × %d MiB written with replication 3, then read back, by %d client thread%s, with two "
          "clients: %s %s Throughput is aggregate MiB/s (all bytes / wall time, MiB = 2^20 bytes; the seed's table "
          "says MB/s). *%% of all on* = this configuration's write throughput as a %% of Cairn with everything on "
          "(the seed tabulates the gain of each item, which is 100 / that − 1)." % (
              (p["dfs_files"], p["size_mb"]) + _threads(p) + (SETUP_JAVA, SETUP_NATIVE)), "",
          "Clusters: one at a time, restarted for every row (fresh data directory). " + SETUP_HDFS + " " + SETUP_CAIRN +
          " Each Cairn row adds the `-D` setting(s) shown (`cairn -D key=false up …`)." + r.settle_sentence(), "",
          "| configuration | HDFS-959 item | Java write MiB/s | % of all on | Java read MiB/s "
          "| hdfs-native write MiB/s | % of all on | hdfs-native read MiB/s |",
          "|---|---|---|---|---|---|---|---|"]
    base = {cl: g("h959", "all on", cl, "write") for cl in ("Java", "hdfs-native")}
    rows = r.data["rows"]
    for row in rows:
        name, item, title = row["name"], row["item"], row["title"]
        cells = []
        for cl in ("Java", "hdfs-native"):
            w, rd = g("h959", name, cl, "write"), g("h959", name, cl, "read")
            cells += [f(w), pct(w, base[cl] and base[cl][0]), f(rd)]
        md.append("| %s | %s | %s |" % (name, "%s: %s" % (item, title) if item != "–" else title, " | ".join(cells)))
    ctr = r.data.get("counters") or {}
    if ctr:
        keys = [("disk_write_calls", "disk write calls"), ("disk_seek_calls", "lseek calls"),
                ("write_chunks_verified_network", "chunks verified by the network stage"),
                ("write_chunks_verified_disk", "chunks verified by the disk stage"),
                ("write_disk_queue_max_depth", "deepest disk queue (packets, since start)"),
                ("fsync_calls", "fsync calls")]
        md += ["", "What the switches change, from the Cairn DataNodes' own counters (`/metrics`, summed over the 3 "
               "DataNodes) during the first Java write of each row (%d files × %d MiB, 3 replicas):" % (
                   p["dfs_files"], p["size_mb"]), "",
               "| configuration | " + " | ".join(k[1] for k in keys) + " |", "|---|" + "---|" * len(keys)]
        for row in rows:
            if row["name"] in ctr:
                md.append("| %s | %s |" % (row["name"], " | ".join(f(ctr[row["name"]].get(k[0])) for k in keys)))
    md += ["", "HDFS-959's item 1 (finer-grained locks in `DFSClient.writeChunk`) is a client change, not a DataNode "
           "one: the Java rows use Hadoop 3.4.1's own client, which has it. Item 3 in the seed is HADOOP-6166 "
           "(PureJavaCrc32, a faster CRC); Cairn's switch replaces the hardware (SSE4.2/ARMv8) CRC32C with a "
           "table-driven software one. The seed measured with replication 1 on 8-core servers and found the items "
           "hidden by the network at replication 3; here replication 3 runs over loopback on %s CPU(s) shared by the "
           "client and all DataNodes." % p["cpus"], ""]
    return md


def checksum_section(r):
    p = r.p
    md = [TITLES["checksum"], "",
          "Measured by `%s`, %s. %s" % (r.data["command"], r.span(), r.reps_sentence()), "",
          "For each `dfs.bytes-per-checksum` C, an HDFS cluster (`./harness minidfs … -D dfs.bytes-per-checksum=C`) and a "
          "Cairn cluster (`cairn -D dfs.bytes-per-checksum=C up …`) are started side by side (otherwise as below) and "
          "stopped after C's runs; repetitions alternate between them%s. Workload as the seed's TestDFSIO rounds, scaled to "
          "this machine: %d files × %d MiB written (replication 3), read back sequentially, then %s random 4 KiB "
          "positional reads at aligned offsets (`--randread-mode pread`, the same offsets on both systems), by %d client "
          "thread%s. *write s*, *read s*, *random read s* = wall time of each phase (what the seed tabulates); MiB/s = "
          "aggregate (MiB = 2^20 bytes); IOPS and p99 latency of the random reads. Ratio rows are Cairn ÷ HDFS of each "
          "figure (for times and latency lower is better)." % (
              (", the order turning each repetition" if p.get("order_turns") else "",
               p["dfs_files"], p["size_mb"], f(p["rand_reads"])) + _threads(p)) + r.settle_sentence(),
          "",
          "* " + SETUP_HDFS.replace("CRC32C/512", "CRC32C with C bytes per checksum"),
          "* " + SETUP_CAIRN.replace("CRC32C/512", "CRC32C with C bytes per checksum"),
          "* Clients: " + SETUP_JAVA + " It takes bytes-per-checksum from its own configuration: run with "
          "`-D dfs.bytes-per-checksum=C`. " + SETUP_NATIVE +
          " It has no setting of its own for it, so it gets C from the cluster; `cairn bench dfsio --bytes-per-checksum C` "
          "stops if the server defaults say otherwise.", ""]
    st = r.data.get("stored") or []
    if st:
        md += ["Checked after the first Java write of each row: bytes-per-checksum in the headers of the block meta files "
               "written: " + "; ".join("%s %s: %s" % (s, "{:,}".format(b), ", ".join("{:,}".format(x) for x in v) or "none found")
                                         for s, b, v in sorted(st, key=lambda x: (x[1], x[0]))) + ".", ""]
    md += checksum_tables(r)
    md += ["Reading: a random 4 KiB read has to fetch and verify every checksum chunk it touches, so with 1 MiB chunks "
           "each read moves 1 MiB (the seed's problem: Ozone's DataNode bytes doubled); sequential reads and writes pay "
           "per chunk instead, so larger chunks help them. The last column is the Cairn DataNodes' bytes sent divided "
           "by the bytes the client asked for (from their `/metrics`); HDFS's DataNodes have no such counter here.", ""]
    return md


def checksum_tables(r):
    g = r.g
    md = []
    cols = [("write_s", 1), ("read_s", 2), ("rand_s", 2), ("write", 0), ("read", 0), ("iops", 0), ("p99", 0)]
    head = ("| bytes per checksum | system | write s | read s | random read s | write MiB/s | read MiB/s "
            "| random read IOPS | random read p99 µs |")
    for cl in ("Java", "hdfs-native"):
        native = cl == "hdfs-native"
        md += ["### %s client" % ("Java (Hadoop 3.4.1)" if not native else "hdfs-native 0.14 (`cairn bench dfsio`)"), "",
               head + (" DataNode bytes sent / asked (random reads) |" if native else ""),
               "|---|---|---|---|---|---|---|---|---|" + ("---|" if native else "")]
        for bpc in r.p["bpcs"]:
            b = "{:,}".format(bpc)
            if native and bpc + 4 > 65536 - 64:
                md.append("| " + " | ".join([b, "both", NATIVE_BUG] + [""] * 7) + " |")
                continue
            for s in ("HDFS", "Cairn"):
                cells = [f(g("ck", s, cl, bpc, k), d) for k, d in cols]
                if native:
                    cells.append(f(g("ck", s, cl, bpc, "amp"), 2) if s == "Cairn" else "–")
                md.append("| %s | %s | %s |" % (b, s, " | ".join(cells)))
            cells = [ratio(g("ck", "Cairn", cl, bpc, k), g("ck", "HDFS", cl, bpc, k)) for k, _ in cols]
            if native:
                cells.append("")
            md.append("| %s | *Cairn/HDFS* | %s |" % (b, " | ".join(cells)))
        md.append("")
    return md


def section_with_facts(md, r):
    tf = ["Machine (at the start of this section's run):", ""] + facts_table(r.data["facts"]) + [""]
    fl = r.failures()
    tf += (["Failures in this run:", ""] + fl + [""]) if fl else ["Failures in this run: none.", ""]
    return md[:4] + tf + md[4:]


def write_tables_page(runs, tables_out, out):
    """runs: {mode: Run} for the modes that have JSON; the others keep their section of the old page."""
    old = open(tables_out).read() if os.path.exists(tables_out) else ""
    md = ["# DataNode tables: HDFS-959 per item, HDDS-10465 bytes per checksum", "",
          "Written by `bench/compare --mode hdfs959`, `--mode checksum`, `--mode tables` (both) or `--mode all` (do not "
          "edit by hand; run it "
          "again). Each section says when and how it was measured; a run of one mode keeps the other section as it was. "
          "The seeds: HDFS-959 (DataNode write-path items, each measured on and off) and HDDS-10465 (write, read and "
          "random-read time for three bytes-per-checksum sizes). Back to [the main benchmark page](%s)." % (
              os.path.relpath(out, os.path.dirname(tables_out))), ""]
    for name, section in (("hdfs959", hdfs959_section), ("checksum", checksum_section)):
        if name in runs:
            body = section_with_facts(section(runs[name]), runs[name])
        else:
            m = re.search(r"<!-- begin %s -->\n(.*?)\n<!-- end %s -->" % (name, name), old, re.S)
            body = m.group(1).split("\n") if m else [TITLES[name], "", "Not run (`bench/compare --mode %s`)." % name, ""]
        md += ["<!-- begin %s -->" % name] + body + ["<!-- end %s -->" % name, ""]
    os.makedirs(os.path.dirname(tables_out) or ".", exist_ok=True)
    with open(tables_out, "w") as fh:
        fh.write("\n".join(md))
