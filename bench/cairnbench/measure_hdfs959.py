"""`--mode hdfs959`: HDFS-959's per-item table. Write then read (replication 3) with the Java client and
hdfs-native on a Cairn cluster restarted with every DataNode write-path optimisation on, each switched
off in turn, and all off; plus real HDFS as a reference row.

Figure keys: ("h959", row name, client, "write" | "read") MiB/s. Also in the JSON: "rows" (name, item,
title, kind, defines: what each row is) and "counters" (the Cairn DataNodes' /metrics deltas over the
first Java write of each row).
"""
from .clients import dig, java_dfsio, native_dfsio, rm_dir, uniq
from .runner import dn_counters

ITEMS = [
    ("pipelined-stages", "2.1", "Concurrency of disk writes (network and disk stages in separate tasks)"),
    ("bulk-receive", "2.2", "Bulk receive (many packets per read from the socket)"),
    ("early-ack", "2.3", "Early ack (ack before the disk write; the last one after it)"),
    ("seek-free", "2.4", "lseek optimisation (no seek before sequential writes)"),
    ("buffered-checksums", "2.5", "Checksum buffered writes"),
    ("checksum-balancing", "2.1 (comment)", "Load balancing: the network stage verifies checksums while the disk queue is deep"),
]


def rows():
    """Every row of the table, HDFS first: {name, item, title, kind, defines}."""
    cairn = [("all on", "–", "–", [])]
    for key, item, title in ITEMS:
        cairn.append(("`%s=false`" % key, item, title, ["cairn.datanode.write.%s=false" % key]))
    cairn.append(("`cairn.datanode.checksum.hardware=false`", "3",
                  "Faster CRC (hardware CRC32C instead of a table-driven software CRC)",
                  ["cairn.datanode.checksum.hardware=false"]))
    cairn.append(("all off", "all", "every switch above false", [d for r in cairn[1:] for d in r[3]]))
    out = [dict(name="HDFS 3.4.1 (reference)", item="–", title="all HDFS's own code", kind="hdfs", defines=[])]
    return out + [dict(name=n, item=i, title=t, kind="cairn", defines=d) for n, i, t, d in cairn]


def run(b):
    p = b.params
    res = b.begin("hdfs959")
    res["facts"] = b.machine_facts()
    res["rows"] = rows()
    res["counters"] = {}
    for i, row in enumerate(res["rows"]):
        name = row["name"]
        try:
            c = b.start_cluster(row["kind"], "h959-%d" % i, row["defines"])
        except RuntimeError as e:
            b.fail("hdfs959 %s: cluster did not start" % name, str(e))
            continue
        try:
            for rep in range(p["reps"]):
                b.log("hdfs959", name, "rep", rep + 1)
                d = uniq("h959-java")
                start = b.data_bytes(c)
                common = dict(threads=p["table_threads"], files=p["dfs_files"], size_mb=p["size_mb"],
                              what="hdfs959 " + name)
                m0 = dn_counters(c)
                w = java_dfsio(b, c.url, "write", d, **common)
                m1 = dn_counters(c)
                if m0 is not None and m1 is not None and rep == 0:
                    res["counters"][name] = {k: (m1[k] if "_max_" in k else m1[k] - m0[k]) for k in m1}
                if w:
                    b.add(("h959", name, "Java", "write"), w["agg_mb_s"])
                    r = java_dfsio(b, c.url, "read", d, **common)
                    b.add(("h959", name, "Java", "read"), r and r["agg_mb_s"])
                rm_dir(b, c.url, d)
                b.settle(c, start, "Java dfsio")
                n = native_dfsio(b, c.url, "write,read", uniq("h959-native"), p["table_threads"], p["dfs_files"],
                                 p["size_mb"], p["rand_reads"], what="hdfs959 " + name)
                b.settle(c, start, "hdfs-native dfsio")
                if n:
                    b.add(("h959", name, "hdfs-native", "write"), dig(n, "write", "aggregate_mib_per_s"))
                    b.add(("h959", name, "hdfs-native", "read"), dig(n, "read", "aggregate_mib_per_s"))
        finally:
            b.stop_cluster(c)
    return b.result(res)
