"""`--mode main`: the NameNode operations (NNThroughputBenchmark and `cairn bench nn`, remote and in-process),
blockReport, the DFSIO-style data path with both clients, the writes again on a Cairn cluster with
dfs.datanode.synconclose=true, and `cairn bench limits`.

Figure keys (every repetition's value under each):
  ("nnj", system, op, threads)   NNThroughputBenchmark ops/s      ("nnr", ...) the same with `cairn bench nn`
  ("inproc", system, threads)    in-process creates/s              ("br", system, client) blockReport reports/s
  ("dfs", system, client, what, threads)  what: write/read MiB/s, pread/seek IOPS, *_p99 µs, pread_amp
  ("fsyncs", system), ("fsyncs-java", system)  DataNode fsync_calls per write run
system: HDFS, Cairn, Cairn-sync; client: Java, hdfs-native.
"""
import json
import os
import re
import shutil
import time

from .clients import cairn_nn, dig, java_dfsio, java_nnbench, native_dfsio, result_line, rm_dir, uniq
from .runner import dn_counter, in_turn

NN_OPS = ["create", "mkdirs", "open", "fileStatus", "rename", "delete"]


def run(b):
    p = b.params
    res = b.begin("main")
    b.log("limits")
    lim_args = ["--dd-bytes", "512m", "--tcp-seconds", "2"] if p["quick"] else []
    lim = b.run([b.cairn, "bench", "limits", "--json", "--dir", b.work] + lim_args, 600)
    try:
        res["limits"] = json.loads(lim.stdout)
    except ValueError:
        b.fail("cairn bench limits", lim.stderr[-500:])
        res["limits"] = {}
    res["facts"] = b.machine_facts()

    hdfs = b.start_cluster("hdfs", "hdfs")
    cairn = b.start_cluster("cairn", "cairn")
    systems = [("HDFS", hdfs), ("Cairn", cairn)]
    res["urls"] = {"HDFS": hdfs.url, "Cairn": cairn.url}
    namenode(b, systems)
    for t in p["dfs_threads"]:
        for rep in range(p["reps"]):
            for s, c in in_turn(systems, rep):
                b.log("dfsio Java", s, "threads", t, "rep", rep + 1)
                java_round(b, s, c, t)
                b.log("dfsio hdfs-native", s, "threads", t, "rep", rep + 1)
                native_round(b, s, c, t)
    sync_writes(b)
    block_report(b, systems)
    b.stop_cluster(hdfs)
    b.stop_cluster(cairn)
    return b.result(res)


def namenode(b, systems):
    p = b.params
    files = p["nn_files"]
    for op in NN_OPS:
        for t in p["nn_threads"]:
            for rep in range(p["reps"]):
                for s, c in in_turn(systems, rep):
                    b.log("NNThroughputBenchmark", s, op, "threads", t, "rep", rep + 1)
                    b.add(("nnj", s, op, t), java_nnbench(b, c.url, op, t, files))
            for rep in range(p["reps"]):
                for s, c in in_turn(systems, rep):
                    b.log("cairn bench nn", s, op, "threads", t, "rep", rep + 1)
                    b.add(("nnr", s, op, t), (cairn_nn(b, ["--fs", c.url], op, t, files) or {}).get("ops_per_sec"))
    for t in p["nn_threads"]:
        for rep in range(p["reps"]):
            b.log("in-process create, threads", t, "rep", rep + 1)
            r = b.run([b.harness, "nnbench", "--fs", "inprocess", "--op", "create", "--threads", str(t), "--files",
                       str(files), "--dir", os.path.join(b.work, "nnbench-inprocess"), "--timeout", "270"], 300)
            if r.returncode == 0 and "RESULT nnbench" in r.stdout:
                b.add(("inproc", "HDFS", t), result_line(r.stdout, "RESULT nnbench")["ops_per_sec"])
            else:
                b.fail("NNThroughputBenchmark --fs inprocess -threads %d" % t, (r.stdout + r.stderr)[-600:])
            d = os.path.join(b.work, "inproc-%d" % time.time_ns())
            b.add(("inproc", "Cairn", t), (cairn_nn(b, ["--in-process", "--dir", d], "create", t, files) or {})
                  .get("ops_per_sec"))
            shutil.rmtree(d, ignore_errors=True)


def java_round(b, s, c, t, writes_only=False):
    p = b.params
    url = c.url
    d = uniq("dfsio-java")
    start = b.data_bytes(c)
    common = dict(threads=t, files=p["dfs_files"], size_mb=p["size_mb"], what="%s, %d threads" % (s, t))
    f0 = dn_counter(c, "fsync_calls")
    w = java_dfsio(b, url, "write", d, **common)
    if w:
        b.add(("dfs", s, "Java", "write", t), w["agg_mb_s"])
        f1 = dn_counter(c, "fsync_calls")
        if f0 is not None and f1 is not None:
            b.add(("fsyncs-java", s), f1 - f0)
        if not writes_only:
            r = java_dfsio(b, url, "read", d, **common)
            b.add(("dfs", s, "Java", "read", t), r and r["agg_mb_s"])
            for m in ("pread", "seek"):
                rr = java_dfsio(b, url, "randread", d, reads=p["rand_reads"], rmode=m, **common)
                if rr:
                    b.add(("dfs", s, "Java", m, t), rr["iops"])
                    b.add(("dfs", s, "Java", m + "_p99", t), rr["lat_us_p99"])
    rm_dir(b, url, d)
    b.settle(c, start, "Java dfsio")


def native_round(b, s, c, t, ops="write,read,randread"):
    p = b.params
    start = b.data_bytes(c)
    r = native_dfsio(b, c.url, ops, uniq("dfsio-native"), t, p["dfs_files"], p["size_mb"], p["rand_reads"],
                     what="%s, %d threads" % (s, t))
    b.settle(c, start, "hdfs-native dfsio")  # it deletes its files at its end
    if not r:
        return
    b.add(("dfs", s, "hdfs-native", "write", t), dig(r, "write", "aggregate_mib_per_s"))
    b.add(("fsyncs", s), dig(r, "write", "datanodes", "fsync_calls"))
    b.add(("dfs", s, "hdfs-native", "read", t), dig(r, "read", "aggregate_mib_per_s"))
    pr, sk = dig(r, "randread", "pread") or {}, dig(r, "randread", "seek_read") or {}
    b.add(("dfs", s, "hdfs-native", "pread", t), pr.get("iops"))
    b.add(("dfs", s, "hdfs-native", "pread_p99", t), pr.get("p99_us"))
    b.add(("dfs", s, "hdfs-native", "seek", t), sk.get("iops"))
    b.add(("dfs", s, "hdfs-native", "seek_p99", t), sk.get("p99_us"))
    b.add(("dfs", s, "hdfs-native", "pread_amp", t), dig(pr, "datanodes", "read_amplification"))


def sync_writes(b):
    """Cairn with dfs.datanode.synconclose=true: started only now and stopped before blockReport, so it runs
    its writes alone (the other two clusters stay up, idle)."""
    try:
        sync = b.start_cluster("cairn", "cairn-sync", ["dfs.datanode.synconclose=true"])
        try:
            for t in b.params["dfs_threads"]:
                for rep in range(b.params["reps"]):
                    b.log("dfsio writes on Cairn (synconclose=true), threads", t, "rep", rep + 1)
                    java_round(b, "Cairn-sync", sync, t, writes_only=True)
                    native_round(b, "Cairn-sync", sync, t, ops="write")
        finally:
            b.stop_cluster(sync)
    except RuntimeError as e:
        b.fail("Cairn with dfs.datanode.synconclose=true", str(e))


def block_report(b, systems):
    """Last: its simulated DataNodes stay registered, and would receive later writes."""
    br = b.params["br"]
    for s, c in systems:
        b.log("blockReport", s)
        r = b.run(["java", "-Xmx1g", "-Dlog4j.configuration=file:" + b.log4j, "-Djava.net.preferIPv4Stack=true",
                   "--add-opens=java.base/java.lang=ALL-UNNAMED", "-cp", b.classpath,
                   "org.apache.hadoop.hdfs.server.namenode.NNThroughputBenchmark", "-fs", c.url, "-op", "blockReport",
                   "-datanodes", str(br["datanodes"]), "-reports", str(br["reports"]),
                   "-blocksPerReport", str(br["blocks_per_report"]), "-blocksPerFile", str(br["blocks_per_file"]),
                   "-blockSize", "1048576"], 300)
        m = re.search(r"Ops per sec: ([0-9.]+)", r.stdout + r.stderr)
        if r.returncode != 0 or not m:
            b.fail("NNThroughputBenchmark -op blockReport against %s (%s)" % (s, c.url),
                   "rc %d: %s" % (r.returncode, (r.stdout + r.stderr)[-600:]))
        else:
            b.add(("br", s, "NNThroughputBenchmark"), m.group(1))
        row = cairn_nn(b, ["--fs", c.url, "--datanodes", str(br["datanodes"]), "--reports", str(br["reports"]),
                           "--blocks-per-report", str(br["blocks_per_report"]), "--blocks-per-file",
                           str(br["blocks_per_file"]), "--threads", "1"], "blockReport", 1, b.params["nn_files"])
        b.add(("br", s, "cairn bench nn"), row and row.get("ops_per_sec"))
