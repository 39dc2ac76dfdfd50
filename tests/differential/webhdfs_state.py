#!/usr/bin/env python3
"""Compares what two NameNodes hold under one path, through WebHDFS.

webhdfs_state.py HDFS_NN_HTTP CAIRN_NN_HTTP [ROOT]   (host:port each; ROOT default /wfz)

Walks ROOT on both: every file and directory (type, length), every directory's quota usage
(names, space, space per type), and each snapshot's view of a snapshottable directory, the
snapshots taken by position (their generated names carry clocks). Prints a unified diff and
exits 1 when they differ, 0 when they agree. `webhdfs_diff.py` seeds leave their state behind
for the next seed (a directory with snapshots cannot be deleted), so running this after each
seed finds the seed where the two clusters parted, which an answer-by-answer comparison shows
only later, if at all.
"""
import difflib
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

DEPTH = 6


def get(nn, path, op):
    url = f"http://{nn}/webhdfs/v1{urllib.parse.quote(path)}?op={op}&user.name=root"
    try:
        with urllib.request.urlopen(url) as r:
            return json.load(r)
    except (urllib.error.HTTPError, urllib.error.URLError, ValueError):
        return {}


def walk(nn, path, depth=0):
    out = []
    listing = get(nn, path, "LISTSTATUS").get("FileStatuses", {}).get("FileStatus", [])
    for st in listing:
        p = path.rstrip("/") + "/" + st["pathSuffix"]
        out.append(f"{st['type'][0]} {p} {st['length']}")
        if st["type"] != "DIRECTORY" or depth >= DEPTH:
            continue
        if "/.snapshot/" not in p:
            q = get(nn, p, "GETQUOTAUSAGE").get("QuotaUsage", {})
            out.append(f"  quota {p} names={q.get('fileAndDirectoryCount')} "
                       f"space={q.get('spaceConsumed')} types={q.get('typeQuota')}")
        out += walk(nn, p, depth + 1)
        snapshots = get(nn, p, "GETSNAPSHOTLIST").get("SnapshotList", [])
        for i, s in enumerate(snapshots):
            name = s["fullPath"].rsplit("/", 1)[-1]
            view = walk(nn, f"{p}/.snapshot/{name}", depth + 1)
            out += [line.replace(f"/.snapshot/{name}", f"/.snapshot/#{i}") for line in view]
    return out


def main():
    hdfs, cairn = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else "/wfz"
    a, b = walk(hdfs, root), walk(cairn, root)
    if a == b:
        print(f"{root}: same ({len(a)} lines)")
        return 0
    print("\n".join(difflib.unified_diff(a, b, "hdfs", "cairn", lineterm="")))
    return 1


if __name__ == "__main__":
    sys.exit(main())
