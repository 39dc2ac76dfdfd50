#!/usr/bin/env python3
"""Differential WebHDFS: the same random REST calls against HDFS and Cairn.

webhdfs_diff.py SEED N HDFS_NN_HTTP CAIRN_NN_HTTP   (host:port each; VERBOSE=1 prints every call;
ODD_PATHS=1 spells some paths oddly: non-ASCII, '+', '%', '.', '..', empty and ':' components)
Prints each call whose (status, normalised body) differs. Symlinks are left out: the
harness's MiniDFSCluster enables them, a default HDFS (and Cairn) does not. So is erasure
coding beyond reading the policy of a path: Cairn has no striped layout and enables no policy
(HDFS enables RS-6-3-1024k), so listing, enabling and setting policies differ by design.
"""
import http.client
import json
import os
import random
import re
import sys
import urllib.parse

seed, n, A, B = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
ODDS = os.environ.get("ODD_PATHS") == "1"
r = random.Random(seed)
ROOT = "/wfz"
NAMES = ["a", "b", "x y", "d.txt"]
# Times are masked only when they look like clocks (after 2001): the small
# ones SETTIMES sets are compared.
TIMES = {"modificationTime", "accessTime"}
VOLATILE = {"fileId", "blockId", "generationStamp",
            "lastUpdate", "lastUpdateMonotonic", "storageID", "ipAddr", "hostName",
            "xferPort", "infoPort", "infoSecurePort", "ipcPort", "datanodeUuid", "name",
            "capacity", "dfsUsed", "remaining", "blockPoolUsed", "cacheCapacity", "cacheUsed",
            "cacheRemaining", "nonDfsUsed", "xceiverCount", "lastBlockReportTime",
            "lastBlockReportMonotonic", "networkLocation", "adminState", "used",
            "numBlocks", "blockPoolID", "bytes", "token", "locatedBlocks", "blockToken",
            "locs", "hosts", "names", "topologyPaths", "cachedHosts", "storageIds",
            "storageTypes", "trashInterval", "keyProviderUri", "encryptDataTransfer", "dirId",
            "crcType", "childrenNum_", "snapshotEnabled_", "ecPolicy_", "Path"}


# Odd spellings of a path, now and then: what the servers must normalise,
# refuse or take literally as HDFS does.
ODD = ["ü", "x+y", "a%20b", "%", ".", "..", "", "a:b", "{x}", "[1]", "#h", "?q"]


def path(depth=None):
    depth = r.choice([1, 1, 1, 2, 2, 3]) if depth is None else depth
    names = [r.choice(NAMES) for _ in range(depth)]
    if ODDS and r.random() < 0.15:
        names[r.randrange(depth)] = r.choice(ODD)
    p = ROOT + "/" + "/".join(names)
    if ODDS and r.random() < 0.05:
        p += "/"
    return p


def call(hostport, method, p, params, body=None, user="root", follow=True):
    q = dict(params)
    q["user.name"] = user
    url = "/webhdfs/v1" + urllib.parse.quote(p) + "?" + urllib.parse.urlencode(q)
    host, port = hostport.split(":")
    for _ in range(3):
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        headers = {"Content-Type": "application/octet-stream"} if body is not None else {}
        c.request(method, url, body=body if body is not None else None, headers=headers)
        resp = c.getresponse()
        data = resp.read()
        loc = resp.getheader("Location")
        c.close()
        if follow and resp.status == 307 and loc:
            u = urllib.parse.urlparse(loc)
            host, port = u.hostname, u.port
            url = u.path + ("?" + u.query if u.query else "")
            continue
        return resp.status, data
    return resp.status, data


def masked(k, x):
    if k in VOLATILE:
        return True
    return k in TIMES and isinstance(x, int) and x > 10**12


def norm(v):
    if isinstance(v, dict):
        return {k: ("<v>" if masked(k, x) else norm(x)) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, str):
        # A snapshot's default name is its creation time.
        v = re.sub(r"s\d{8}-\d{6}\.\d{3}", "s<time>", v)
        return v.replace("hdfs://127.0.0.1", "hdfs://nn").split("\n")[0][:300]
    return v


def body_norm(status, data):
    try:
        j = json.loads(data)
    except Exception:
        return data[:64] if len(data) < 5000 else ("<%d bytes, hash %d>" % (len(data), hash(data)))
    if isinstance(j, dict) and "RemoteException" in j:
        e = j["RemoteException"]
        return {"exc": e.get("exception"), "msg": norm(e.get("message", ""))}
    return norm(j)


def op():
    k = r.choices(
        ["MKDIRS", "CREATE", "APPEND", "OPEN", "GETFILESTATUS", "LISTSTATUS", "LISTSTATUS_BATCH",
         "GETCONTENTSUMMARY", "GETQUOTAUSAGE", "GETFILECHECKSUM", "RENAME", "DELETE",
         "SETPERMISSION", "SETOWNER", "SETREPLICATION", "SETTIMES", "TRUNCATE", "CONCAT",
         "SETXATTR", "GETXATTRS", "LISTXATTRS", "REMOVEXATTR", "MODIFYACLENTRIES",
         "GETACLSTATUS", "REMOVEACL", "CHECKACCESS", "GETSTORAGEPOLICY", "SETSTORAGEPOLICY",
         "GETFILEBLOCKLOCATIONS", "GETHOMEDIRECTORY", "GETTRASHROOT", "GETSTATUS", "UNSETSTORAGEPOLICY",
         "GETSERVERDEFAULTS", "GETSTATUS", "ALLOWSNAPSHOT", "DISALLOWSNAPSHOT", "CREATESNAPSHOT",
         "DELETESNAPSHOT", "RENAMESNAPSHOT", "GETSNAPSHOTDIFF", "GETSNAPSHOTTABLEDIRECTORYLIST",
         "GETSNAPSHOTLIST", "GETECPOLICY", "GETALLSTORAGEPOLICY", "GETXATTRS_ONE",
         "GETTRASHROOTS", "GETSNAPSHOTDIFFLISTING", "UNSETECPOLICY",
         "SATISFYSTORAGEPOLICY", "GETFILELINKSTATUS", "SETQUOTA", "SETQUOTABYSTORAGETYPE"],
        weights=[8, 8, 3, 5, 6, 5, 2, 3, 2, 3, 5, 5, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 2, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1,
                 3, 1, 3, 2, 2, 2, 1, 2, 1, 1, 2,
                 1, 2, 1, 1, 1, 2, 1])[0]
    p = path()
    user = r.choice(["root"] * 4 + ["alice"])
    if k == "MKDIRS":
        return "PUT", p, {"op": k, **r.choice([{}, {"permission": "700"}, {"permission": "1777"}, {"permission": "999"}])}, None, user
    if k == "CREATE":
        size = r.choice([0, 1, 512, 513, 70000])
        return "PUT", p, {"op": k, **r.choice([{}, {"overwrite": "true"}, {"overwrite": "false"}, {"replication": "2"}, {"permission": "600"}, {"blocksize": "1048576"}, {"blocksize": "100"}])}, bytes(i % 253 for i in range(size)), user
    if k == "APPEND":
        return "POST", p, {"op": k}, bytes(range(r.choice([1, 100, 700]) % 256)) * 1, user
    if k == "OPEN":
        return "GET", p, {"op": k, **r.choice([{}, {"offset": "5"}, {"offset": "100", "length": "10"}, {"offset": "999999"}, {"length": "0"}, {"offset": "-1"}])}, None, user
    if k in ("GETFILESTATUS", "LISTSTATUS", "GETCONTENTSUMMARY", "GETQUOTAUSAGE", "GETFILECHECKSUM",
             "GETXATTRS", "LISTXATTRS", "GETACLSTATUS", "GETSTORAGEPOLICY", "GETFILEBLOCKLOCATIONS",
             "GETHOMEDIRECTORY", "GETTRASHROOT", "GETSERVERDEFAULTS", "GETSTATUS"):
        return "GET", r.choice([p, ROOT]), {"op": k}, None, user
    if k == "LISTSTATUS_BATCH":
        return "GET", ROOT, {"op": k, **r.choice([{}, {"startAfter": "a"}, {"startAfter": "zz"}])}, None, user
    if k == "RENAME":
        return "PUT", p, {"op": k, "destination": r.choice([path(), ROOT, "/", "relative"])}, None, user
    if k == "DELETE":
        return "DELETE", p, {"op": k, **r.choice([{}, {"recursive": "true"}, {"recursive": "false"}])}, None, user
    if k == "SETPERMISSION":
        return "PUT", p, {"op": k, **r.choice([{}, {"permission": "711"}, {"permission": "abc"}])}, None, user
    if k == "SETOWNER":
        return "PUT", p, {"op": k, **r.choice([{}, {"owner": "alice"}, {"group": "staff"}, {"owner": "bob", "group": "g"}])}, None, user
    if k == "SETREPLICATION":
        return "PUT", p, {"op": k, **r.choice([{}, {"replication": "1"}, {"replication": "0"}, {"replication": "5"}])}, None, user
    if k == "SETTIMES":
        return "PUT", p, {"op": k, **r.choice([{}, {"modificationtime": "1000"}, {"accesstime": "2000"}, {"modificationtime": "-1", "accesstime": "5"}])}, None, user
    if k == "TRUNCATE":
        return "POST", p, {"op": k, "newlength": r.choice(["0", "1", "512", "1000000", "-1"])}, None, user
    if k == "CONCAT":
        return "POST", p, {"op": k, "sources": ",".join(path() for _ in range(r.choice([1, 2])))}, None, user
    if k == "SETXATTR":
        return "PUT", p, {"op": k, "xattr.name": r.choice(["user.a", "user.b", "trusted.t", "bad.x"]), "xattr.value": r.choice(["v", "0x01", '"q"']), "flag": r.choice(["CREATE", "REPLACE"])}, None, user
    if k == "REMOVEXATTR":
        return "PUT", p, {"op": k, "xattr.name": r.choice(["user.a", "user.zz"])}, None, user
    if k == "MODIFYACLENTRIES":
        return "PUT", p, {"op": k, "aclspec": r.choice(["user:alice:rwx", "group::r-x", "default:user:bob:r--", "bogus"])}, None, user
    if k == "REMOVEACL":
        return "PUT", p, {"op": k}, None, user
    if k == "CHECKACCESS":
        return "GET", p, {"op": k, "fsaction": r.choice(["rwx", "r--", "---", "bad"])}, None, user
    if k == "SETSTORAGEPOLICY":
        return "PUT", p, {"op": k, "storagepolicy": r.choice(["COLD", "HOT", "NOPE"])}, None, user
    if k == "UNSETSTORAGEPOLICY":
        return "POST", p, {"op": k}, None, user
    if k in ("ALLOWSNAPSHOT", "DISALLOWSNAPSHOT"):
        return "PUT", r.choice([p, ROOT + "/a"]), {"op": k}, None, user
    if k == "CREATESNAPSHOT":
        return "PUT", r.choice([p, ROOT + "/a"]), {"op": k, **r.choice([{}, {"snapshotname": "s1"}, {"snapshotname": "s2"}])}, None, user
    if k == "DELETESNAPSHOT":
        return "DELETE", r.choice([p, ROOT + "/a"]), {"op": k, "snapshotname": r.choice(["s1", "s2", "nope"])}, None, user
    if k == "RENAMESNAPSHOT":
        return "PUT", r.choice([p, ROOT + "/a"]), {"op": k, "oldsnapshotname": r.choice(["s1", "s2"]), "snapshotname": r.choice(["s2", "s3"])}, None, user
    if k == "GETSNAPSHOTDIFF":
        return "GET", r.choice([p, ROOT + "/a"]), {"op": k, "oldsnapshotname": r.choice(["s1", "s2", ""]), "snapshotname": r.choice(["s2", "s3", ""])}, None, user
    if k in ("GETSNAPSHOTTABLEDIRECTORYLIST", "GETALLSTORAGEPOLICY"):
        return "GET", "/", {"op": k}, None, user
    if k in ("GETSNAPSHOTLIST", "GETECPOLICY"):
        return "GET", r.choice([p, ROOT + "/a"]), {"op": k}, None, user
    if k == "GETTRASHROOTS":
        return "GET", "/", {"op": k, **r.choice([{}, {"allusers": "true"}])}, None, user
    if k == "GETSNAPSHOTDIFFLISTING":
        # An empty oldsnapshotname makes HDFS 3.4.1 throw NullPointerException.
        return "GET", r.choice([p, ROOT + "/a"]), {"op": k, "oldsnapshotname": r.choice(["s1", "s2"]), "snapshotname": r.choice(["s2", ""]), **r.choice([{}, {"snapshotdiffstartpath": "", "snapshotdiffindex": "-1"}])}, None, user
    if k in ("UNSETECPOLICY", "SATISFYSTORAGEPOLICY"):
        return "POST", p, {"op": k}, None, user
    if k == "GETFILELINKSTATUS":
        return "GET", p, {"op": k}, None, user
    if k == "SETQUOTA":
        return "PUT", r.choice([p, ROOT + "/a"]), {"op": k, **r.choice([{"namespacequota": "3"}, {"storagespacequota": "1000"}, {"namespacequota": "-1", "storagespacequota": "-1"}, {"namespacequota": "0"}, {}])}, None, user
    if k == "SETQUOTABYSTORAGETYPE":
        return "PUT", r.choice([p, ROOT + "/a"]), {"op": k, "storagetype": r.choice(["SSD", "DISK", "NOPE"]), "storagespacequota": r.choice(["1000", "-1"])}, None, user
    if k == "GETXATTRS_ONE":
        return "GET", p, {"op": "GETXATTRS", "xattr.name": r.choice(["user.a", "user.nope"]), "encoding": r.choice(["text", "hex", "base64"])}, None, user
    raise AssertionError(k)


for base in (A, B):
    deep = [ROOT + "/" + a + "/" + b for a in NAMES for b in NAMES] + [ROOT + "/" + a for a in NAMES]
    for d in deep + [ROOT]:
        for sn in ("s1", "s2", "s3"):
            call(base, "DELETE", d, {"op": "DELETESNAPSHOT", "snapshotname": sn})
        call(base, "PUT", d, {"op": "DISALLOWSNAPSHOT"})
    for stray in [ROOT] + ["/" + n for n in NAMES]:
        call(base, "DELETE", stray, {"op": "DELETE", "recursive": "true"})
    call(base, "PUT", ROOT + "/a/b", {"op": "MKDIRS", "permission": "777"})
    call(base, "PUT", ROOT, {"op": "SETPERMISSION", "permission": "777"})
    call(base, "PUT", ROOT + "/d.txt", {"op": "CREATE"}, bytes(300))
diffs = 0
for i in range(n):
    method, p, params, body, user = op()
    ra = call(A, method, p, params, body, user)
    rb = call(B, method, p, params, body, user)
    na, nb = (ra[0], body_norm(*ra)), (rb[0], body_norm(*rb))
    if os.environ.get("VERBOSE"):
        print(f"  ({i}) {user} {method} {p} {params} -> {na[0]} {str(na[1])[:80]} | {nb[0]} {str(nb[1])[:80]}")
    if na != nb:
        diffs += 1
        print(f"[{seed}.{i}] {user} {method} {p} {params}\n  HDFS : {na}\n  Cairn: {nb}")
print(f"seed {seed}: {diffs} differences in {n} calls")
