"""`--mode checksum`: HDDS-10465's table. Write, read and random 4 KiB preads for each dfs.bytes-per-checksum
in params "bpcs" on HDFS and Cairn (both clusters started with it; the Java client gets it with -D too).

Figure keys: ("ck", system, client, bpc, what), what: write_s, read_s, rand_s (wall seconds), write, read
(MiB/s), iops, p99 (µs), amp (Cairn DataNodes' bytes sent / asked, hdfs-native only). Also "stored":
[system, bpc, [bytes-per-checksum found in the meta files written]] after the first Java write.
"""
import time

from .clients import NATIVE_MAX_BPC, dig, java_dfsio, native_dfsio, rm_dir, stored_bpc, uniq
from .runner import in_turn


def run(b):
    p = b.params
    res = b.begin("checksum")
    res["facts"] = b.machine_facts()
    res["stored"] = []
    for bpc in p["bpcs"]:
        defs = ["dfs.bytes-per-checksum=%d" % bpc]
        started = []
        try:
            for kind, s in (("hdfs", "HDFS"), ("cairn", "Cairn")):
                started.append((s, b.start_cluster(kind, "bpc%d-%s" % (bpc, s.lower()), defs)))
        except RuntimeError as e:
            b.fail("checksum %d: cluster did not start" % bpc, str(e))
        try:
            for rep in range(p["reps"]):
                for s, c in in_turn(started, rep):
                    one_round(b, res, s, c, bpc, defs, rep)
        finally:
            for _, c in started:
                b.stop_cluster(c)
    return b.result(res)


def one_round(b, res, s, c, bpc, defs, rep):
    p = b.params
    b.log("checksum", bpc, s, "Java rep", rep + 1)
    what = "checksum %d, %s" % (bpc, s)
    d = uniq("bpc-java")
    start = b.data_bytes(c)
    common = dict(threads=p["table_threads"], files=p["dfs_files"], size_mb=p["size_mb"], defines=defs, what=what)
    t0 = time.time() - 1
    w = java_dfsio(b, c.url, "write", d, **common)
    if w:
        if rep == 0:
            res["stored"].append([s, bpc, stored_bpc(c.dir, t0)])
        b.add(("ck", s, "Java", bpc, "write_s"), w["wall_s"])
        b.add(("ck", s, "Java", bpc, "write"), w["agg_mb_s"])
        r = java_dfsio(b, c.url, "read", d, **common)
        if r:
            b.add(("ck", s, "Java", bpc, "read_s"), r["wall_s"])
            b.add(("ck", s, "Java", bpc, "read"), r["agg_mb_s"])
        rr = java_dfsio(b, c.url, "randread", d, reads=p["rand_reads"], rmode="pread", **common)
        if rr:
            b.add(("ck", s, "Java", bpc, "rand_s"), rr["wall_s"])
            b.add(("ck", s, "Java", bpc, "iops"), rr["iops"])
            b.add(("ck", s, "Java", bpc, "p99"), rr["lat_us_p99"])
    rm_dir(b, c.url, d)
    b.settle(c, start, "Java dfsio")
    if bpc > NATIVE_MAX_BPC:
        return  # hdfs-native 0.14.8 cannot write it (render_common.NATIVE_BUG): never run
    b.log("checksum", bpc, s, "hdfs-native rep", rep + 1)
    n = native_dfsio(b, c.url, "write,read,randread", uniq("bpc-native"), p["table_threads"], p["dfs_files"],
                     p["size_mb"], p["rand_reads"], bpc=bpc, what=what)
    b.settle(c, start, "hdfs-native dfsio")
    if n:
        pr = dig(n, "randread", "pread") or {}
        for k, v in (("write_s", dig(n, "write", "wall_s")), ("write", dig(n, "write", "aggregate_mib_per_s")),
                     ("read_s", dig(n, "read", "wall_s")), ("read", dig(n, "read", "aggregate_mib_per_s")),
                     ("rand_s", pr.get("wall_s")), ("iops", pr.get("iops")), ("p99", pr.get("p99_us")),
                     ("amp", dig(pr, "datanodes", "read_amplification"))):
            b.add(("ck", s, "hdfs-native", bpc, k), v)
