"""The benchmark clients as the measure_* modules call them: Hadoop's
NNThroughputBenchmark and the harness's DFSIO-style Java client, and
`cairn bench nn` / `cairn bench dfsio`. Each returns its parsed result, or
None after recording why it failed (so one failed run never stops a mode).
"""
import json
import os
import re
import time

NATIVE_MAX_BPC = 65536 - 64 - 4  # hdfs-native 0.14.8 cannot write with more bytes per checksum (see render_common)


def kv(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def result_line(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix):
            return kv(line)
    raise RuntimeError("no %r line in: %s" % (prefix, text[-1500:]))


def dig(j, *path):
    for p in path:
        if isinstance(j, dict) and p in j:
            j = j[p]
        else:
            return None
    return j


def uniq(prefix):
    return "/%s-%d" % (prefix, time.time_ns())


def io_timeout(mib):
    return int(120 + mib / 4)  # at least 4 MiB/s, or it is stuck


def java_dfsio(b, url, mode, d, threads, files, size_mb, reads=None, rmode="pread", defines=(), what=""):
    cmd = [b.harness, "dfsio", "--fs", url, "--dir", d, "--files", str(files), "--size-mb", str(size_mb),
           "--threads", str(threads), "--mode", mode]
    if mode == "write":
        cmd += ["--replication", "3"]
    if mode == "randread":
        cmd += ["--read-size", "4096", "--reads", str(reads), "--randread-mode", rmode]
    for x in defines:
        cmd += ["-D", x]
    timeout = 120 + reads // 50 if mode == "randread" else io_timeout(files * size_mb)
    p = b.run(cmd, timeout)
    if p.returncode != 0:
        b.fail("harness dfsio --mode %s%s %s (%s)" % (mode, " " + rmode if mode == "randread" else "",
                                                      " ".join("-D " + x for x in defines), what),
               "rc %d: %s" % (p.returncode, (p.stdout + p.stderr)[-700:]))
        return None
    try:
        return result_line(p.stdout, "RESULT dfsio")
    except RuntimeError as e:
        b.fail("harness dfsio --mode %s (%s)" % (mode, what), str(e))
        return None


def native_dfsio(b, url, ops, d, threads, files, size_mb, reads, bpc=None, what=""):
    if bpc is not None and bpc > NATIVE_MAX_BPC:
        raise AssertionError("hdfs-native 0.14.8 cannot write with bytes-per-checksum %d" % bpc)
    cmd = [b.cairn, "bench", "dfsio", "--json", "--fs", url, "--files", str(files), "--size", "%dm" % size_mb,
           "--threads", str(threads), "--replication", "3", "--ops", ops, "--randread-count", str(reads),
           "--randread-size", "4k", "--dir", d]
    if bpc is not None:
        cmd += ["--bytes-per-checksum", str(bpc)]
    timeout = io_timeout(2 * files * size_mb) + (reads // 25 if "randread" in ops else 0)
    p = b.run(cmd, timeout)
    if p.returncode != 0:
        b.fail("cairn bench dfsio --ops %s%s (%s)" % (ops, " --bytes-per-checksum %d" % bpc if bpc else "", what),
               "rc %d: %s" % (p.returncode, (p.stderr or p.stdout)[-700:]))
        return None
    try:
        return json.loads(p.stdout)["results"]
    except (ValueError, KeyError) as e:
        b.fail("cairn bench dfsio (%s): bad JSON" % what, str(e))
        return None


def java_nnbench(b, url, op, t, files):
    """NNThroughputBenchmark (remote mode through the harness): ops/s, or None."""
    p = b.run([b.harness, "nnbench", "--fs", url, "--op", op, "--threads", str(t), "--files", str(files),
               "--dir", os.path.join(b.work, "nnbench"), "--timeout", "270"], 300)
    if p.returncode != 0:
        b.fail("NNThroughputBenchmark -op %s -threads %d against %s" % (op, t, url),
               "rc %d: %s" % (p.returncode, (p.stdout + p.stderr)[-600:]))
        return None
    try:
        return float(result_line(p.stdout, "RESULT nnbench")["ops_per_sec"])
    except RuntimeError as e:
        b.fail("NNThroughputBenchmark -op %s -threads %d against %s" % (op, t, url), str(e))
        return None


def cairn_nn(b, extra, op, t, files):
    """`cairn bench nn --json`: its first result row, or None."""
    p = b.run([b.cairn, "bench", "nn", "--json", "--op", op, "--threads", str(t), "--files", str(files)] + extra, 300)
    if p.returncode != 0:
        b.fail("cairn bench nn %s --op %s --threads %d" % (" ".join(extra), op, t), p.stderr[-600:])
        return None
    try:
        return json.loads(p.stdout)["results"][0]
    except (ValueError, KeyError, IndexError) as e:
        b.fail("cairn bench nn %s --op %s --threads %d: bad JSON" % (" ".join(extra), op, t), str(e))
        return None


def rm_dir(b, url, d):
    b.run([b.cairn, "dfs", "-fs", url, "-rm", "-r", "-f", "-skipTrash", d], 120)


def stored_bpc(cluster_dir, since):
    """bytes-per-checksum in the headers of the block meta files written since `since` (both systems use
    Hadoop's meta format: version (2 bytes), checksum type (1), bytes per checksum (4, big endian))."""
    seen = set()
    for dp, _, fns in os.walk(cluster_dir):
        for fn in fns:
            if fn.endswith(".meta"):
                path = os.path.join(dp, fn)
                try:
                    if os.path.getmtime(path) < since:
                        continue
                    with open(path, "rb") as fh:
                        h = fh.read(7)
                    if len(h) == 7:
                        seen.add(int.from_bytes(h[3:7], "big"))
                except OSError:
                    pass
    return sorted(seen)
